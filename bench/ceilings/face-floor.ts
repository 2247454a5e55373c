import { readFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { performance } from 'node:perf_hooks';
import { createFaceEngine } from '../../src/modules/face/index.ts';
import { repoPath } from '../lib/proc.ts';

/**
 * The face match's floor: the service's own pipeline (src/modules/face), bare, in a loop on the same
 * two images: the selfie checked, then the selfie and the record photo described and compared, as a
 * face worker does for one match (two jobs), with no HTTP, queue, database or lookup. Runs
 * FLOOR_SECONDS after a short warm-up (at a face worker's priority, FACE_NICE), or FLOOR_COUNT matches one at a time, and prints one JSON line:
 * {matches, seconds, p50Ms, rssKb}.
 */
const selfie = readFileSync(repoPath('src/simulators/identity-authority/faces/grace-hopper.selfie.jpg'));
const photo = readFileSync(repoPath('src/simulators/identity-authority/faces/grace-hopper.reference.jpg'));
// The same CPU priority as a face worker (FACE_NICE added to the nice value, as workers/face.ts does).
setPriority(Math.min(19, getPriority() + Number(process.env.FACE_NICE ?? '10')));
const engine = await createFaceEngine();

async function one(): Promise<void> {
  const checked = await engine.selfie(selfie);
  if (!('descriptor' in checked)) throw new Error('selfie refused');
  const again = await engine.selfie(selfie);
  const reference = await engine.reference(photo);
  if (!('descriptor' in again) || !reference) throw new Error('no face');
  engine.distance(again.descriptor, reference);
}

for (let i = 0; i < 3; i++) await one();
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
process.stdout.write(`${JSON.stringify({ matches: times.length, seconds: elapsed, p50Ms: times[Math.floor(times.length / 2)] ?? 0, rssKb: Number(rss ?? 0) })}\n`);
