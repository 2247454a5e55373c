import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoadRecord, TenantsResult, TenantsRun, TenantsSpec } from '../tenants-load.ts';
import { repoPath, spawnNode } from './proc.ts';

/** One line per target, the format every benchmark of this repository prints. */
export type Target = { target: string; value: number; goal: number; met: boolean; unit?: string; note?: string };

export function atMost(target: string, value: number, goal: number, extra: Partial<Target> = {}): Target {
  return { target, value: round(value), goal, met: Number.isFinite(value) && value <= goal, ...extra };
}

export function atLeast(target: string, value: number, goal: number, extra: Partial<Target> = {}): Target {
  return { target, value: round(value), goal, met: Number.isFinite(value) && value >= goal, ...extra };
}

export function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export function statuses(records: LoadRecord[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of records) {
    const k = r.code ? `${r.status}:${r.code}` : String(r.status);
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

/** Runs the tenants load generator in a process of its own and returns every request it started. */
export async function runTenantsLoad(spec: TenantsSpec): Promise<TenantsResult> {
  return (await runTenantsLoadTimed(spec)).tenants;
}

/** The same, with the wall-clock time the records' `startMs` count from (to place events seen outside the generator). */
export async function runTenantsLoadTimed(spec: TenantsSpec): Promise<TenantsRun> {
  const dir = mkdtempSync(join(tmpdir(), 'idv-tenants-'));
  const file = join(dir, 'spec.json');
  writeFileSync(file, JSON.stringify(spec));
  const out = join(dir, 'records.json');
  const child = spawnNode('tenants-load', repoPath('bench/tenants-load.ts'), {}, { args: [file, out] });
  const { code } = await child.exited;
  if (code !== 0) throw new Error(`load generator failed (${code}):\n${child.logs.slice(-20).join('\n')}`);
  return JSON.parse(readFileSync(out, 'utf8')) as TenantsRun;
}

export { writeResultsSection } from './report.ts';
