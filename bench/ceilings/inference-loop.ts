import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { FaceEngine } from '../../src/modules/face/index.ts';

/**
 * The loop of the face floors (face-floor.ts, liveness-floor.ts): a short warm-up, then `one` for
 * FLOOR_SECONDS, or FLOOR_COUNT times one at a time, and one JSON line on stdout:
 * {<unit>, seconds, p50Ms, rssKb}, `unit` naming what was counted (matches, checks).
 */
export async function inferenceLoop(unit: string, one: () => Promise<void>, warmup: number): Promise<void> {
  for (let i = 0; i < warmup; i++) await one();
  const seconds = Number(process.env.FLOOR_SECONDS ?? '0');
  const count = Number(process.env.FLOOR_COUNT ?? '0');
  const times: number[] = [];
  const started = performance.now();
  while (seconds > 0 ? performance.now() - started < seconds * 1000 : times.length < count) {
    const t = performance.now();
    await one();
    times.push(performance.now() - t);
  }
  const elapsed = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  const rss = /VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  process.stdout.write(`${JSON.stringify({ [unit]: times.length, seconds: elapsed, p50Ms: times[Math.floor(times.length / 2)] ?? 0, rssKb: Number(rss ?? 0) })}\n`);
}

/** A face match's inferences after a check made in another job (a live match's, a liveness check's front frame): the selfie checked, then described again with the record photo and compared (face.compare). */
export async function faceMatchInferences(engine: FaceEngine, selfie: Buffer, photo: Buffer): Promise<void> {
  const checked = await engine.selfie(selfie);
  if (!('descriptor' in checked)) throw new Error('selfie refused');
  await comparisonInferences(engine, selfie, photo);
}

/** One face.compare job's inferences: the selfie described (and so checked) with the record photo, and compared. A found fixture's whole face match. */
export async function comparisonInferences(engine: FaceEngine, selfie: Buffer, photo: Buffer): Promise<void> {
  const described = await engine.selfie(selfie);
  const reference = await engine.reference(photo);
  if (!('descriptor' in described) || !reference) throw new Error('no face');
  engine.distance(described.descriptor, reference);
}
