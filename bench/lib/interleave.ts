import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { percentile, type LoadResult, type LoadSpec } from '../load.ts';
import { tmp, type Measured } from './measure.ts';

export const ROUNDS = 3;

/**
 * A system and its floors measured in turns (A, B, A, B, A, B) rather than once each: on a machine
 * other work shares, a slow patch then falls on both sides instead of on one. Each side's warm-up
 * runs in its first round only; every round measures durationS / ROUNDS. The rounds of one side are
 * merged: answers and statuses added, throughput over the summed time, percentiles over every 2xx
 * latency of every round, CPU per request over the summed CPU and requests; the V8 profile is the
 * last round's.
 */
export async function interleaved<T extends unknown[]>(
  o: { durationS: number; warmupS: number },
  sides: [...{ [K in keyof T]: (spec: Partial<LoadSpec>) => Promise<Measured> }],
): Promise<{ [K in keyof T]: Measured }> {
  const runs: Measured[][] = sides.map(() => []);
  const files: string[][] = sides.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [side, measure] of sides.entries()) {
      const file = join(tmp, `lat-${side}-${round}-${Math.random().toString(36).slice(2)}.json`);
      files[side]!.push(file);
      runs[side]!.push(await measure({ durationS: Math.max(1, Math.round(o.durationS / ROUNDS)), warmupS: round === 0 ? o.warmupS : 0, okLatenciesFile: file }));
    }
  }
  return runs.map((r, side) => merge(r, files[side]!)) as { [K in keyof T]: Measured };
}

function merge(ms: Measured[], files: string[]): Measured {
  const ok = files.flatMap((f) => JSON.parse(readFileSync(f, 'utf8')) as number[]).sort((a, b) => a - b);
  for (const f of files) rmSync(f, { force: true });
  const sum = (f: (r: LoadResult) => number) => ms.reduce((a, m) => a + f(m.result), 0);
  const durationS = sum((r) => r.durationS);
  const statuses: Record<string, number> = {};
  for (const m of ms) for (const [k, v] of Object.entries(m.result.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  const requests = sum((r) => r.requests);
  const cpu: Record<string, number> = {};
  for (const name of Object.keys(ms[0]!.cpuMsPerRequest ?? {})) {
    const total = ms.reduce((a, m) => a + (m.cpuMsPerRequest?.[name] ?? 0) * m.result.requests, 0);
    cpu[name] = Math.round((total * 100) / Math.max(1, requests)) / 100;
  }
  const rssMb: Record<string, number> = {};
  for (const m of ms) for (const [k, v] of Object.entries(m.rssMb)) rssMb[k] = Math.max(rssMb[k] ?? 0, v);
  const last = ms.at(-1)!;
  const latencyMs = { p50: percentile(ok, 50), p95: percentile(ok, 95), p99: percentile(ok, 99), max: percentile(ok, 100), mean: ok.length ? Math.round((ok.reduce((a, b) => a + b, 0) / ok.length) * 100) / 100 : 0 };
  return {
    ...last,
    result: {
      requests,
      ok: ok.length,
      durationS: Math.round(durationS * 100) / 100,
      throughput: Math.round((ok.length / Math.max(0.001, durationS)) * 10) / 10,
      latencyMs,
      allLatencyMs: last.result.allLatencyMs,
      statuses,
      non2xx: sum((r) => r.non2xx),
      errors: sum((r) => r.errors),
      timeouts: sum((r) => r.timeouts),
    },
    rssMb,
    cpuMsPerRequest: cpu,
  };
}
