import { spawnNode } from './proc.ts';
import type { Target } from './report.ts';

/** What bench/face.ts and bench/liveness.ts share: their floors' runs, percentiles, bystanders and targets. */

export type FloorLine = { seconds: number; p50Ms: number; rssKb: number };

/** Runs a floor (ceilings/inference-loop.ts) in a process of its own; `unit` is what its line counts. */
export async function runFloor<U extends string>(name: string, entry: string, env: Record<string, string>, unit: U): Promise<FloorLine & Record<U, number>> {
  const child = spawnNode(name, entry, env, { captureLogs: true });
  const { code } = await child.exited;
  const line = child.logs.find((l) => l.startsWith(`{"${unit}"`));
  if (code !== 0 || !line) throw new Error(`${name} failed (${code}): ${child.logs.slice(-5).join(' | ')}`);
  return JSON.parse(line) as FloorLine & Record<U, number>;
}

export const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};

/** n bystander requests, 4 at a time: their durations (ms). */
export async function bystanders(n: number, send: () => Promise<{ status: number; ms: number }>, count: (status: number) => void): Promise<number[]> {
  const ms: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next++ < n) {
        const r = await send();
        count(r.status);
        ms.push(r.ms);
      }
    }),
  );
  return ms;
}

/** A target, missed as well whenever any answer of the run was not a 200. */
export function judgedTarget(name: string, value: number, goal: number, op: '>=' | '<=', statuses: Record<string, number>, note = ''): Target {
  const v = Math.round(value * 1000) / 1000;
  const bad = Object.keys(statuses).filter((s) => s !== '200');
  return { target: name, value: v, goal, op, met: (op === '>=' ? v >= goal : v <= goal) && bad.length === 0, how: bad.length ? `non-200 answers${note}: ${JSON.stringify(statuses)}` : '' };
}
