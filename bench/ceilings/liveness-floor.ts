import { readFileSync } from 'node:fs';
import { loadConfig } from '../../src/config.ts';
import { createFaceEngine, FACE_SAME_PERSON_DISTANCE } from '../../src/modules/face/index.ts';
import { livenessRules } from '../../src/modules/liveness/index.ts';
// The judging itself, bare: the door offers only the job (which opens sealed frames first), and a
// door's names are for the service's own callers.
import { judgeLiveness } from '../../src/modules/liveness/judge.ts';
import { frameSet, sequence, type Challenge, type FrameSet } from '../lib/liveness-frames.ts';
import { repoPath } from '../lib/proc.ts';
import { faceMatchInferences, inferenceLoop } from './inference-loop.ts';
import { lowerPriority } from '../../src/lib/process.ts';

/**
 * The liveness check's floor: the service's own functions (src/modules/face, src/modules/liveness),
 * bare, in a loop on the bench's frames (bench/lib/liveness-frames.ts, the run's salt in
 * FLOOR_FRAME_SALT: the same bytes the service is sent): what a face worker does for one face match
 * with liveness (three jobs): the session's seven frames judged (judgeLiveness with the engine's
 * `frame` and the worker's rules, livenessRules from the service's configuration), then the front frame
 * checked as a selfie, then described again with the record photo and compared. No HTTP, queue,
 * sealing, database, session or lookup. The challenge order turns through all six. Runs FLOOR_SECONDS
 * after a short warm-up (at a face worker's priority, FACE_NICE), or FLOOR_COUNT checks one at a time,
 * and prints one JSON line: {checks, seconds, p50Ms, rssKb}.
 */
const config = loadConfig(process.env);
const photo = readFileSync(repoPath('src/simulators/identity-authority/faces/grace-hopper.reference.jpg'));
const salt = process.env.FLOOR_FRAME_SALT ?? 'floor';
const sets: FrameSet[] = Array.from({ length: 6 }, (_, i) => frameSet(salt, i));
const ORDERS: Challenge[][] = [
  ['turn_left', 'turn_right', 'look_up'],
  ['turn_left', 'look_up', 'turn_right'],
  ['turn_right', 'turn_left', 'look_up'],
  ['turn_right', 'look_up', 'turn_left'],
  ['look_up', 'turn_left', 'turn_right'],
  ['look_up', 'turn_right', 'turn_left'],
];
// The same CPU priority as a face worker (FACE_NICE added to the nice value, as workers/face.ts does).
if (config.FACE_NICE > 0) lowerPriority(config.FACE_NICE);
const engine = await createFaceEngine();
const rules = livenessRules(config, FACE_SAME_PERSON_DISTANCE);

let n = 0;
async function one(): Promise<void> {
  const i = n++ % sets.length;
  const frames = sequence(sets[i]!, ORDERS[i]!);
  const judged = await judgeLiveness({ analyse: (image) => engine.frame(image), distance: engine.distance }, ORDERS[i]!, frames, rules);
  if (judged.status !== 'passed' || judged.front === undefined) throw new Error(`liveness not passed: ${judged.reasons.join(', ')}`);
  const selfie = frames[judged.front]!.image;
  await faceMatchInferences(engine, selfie, photo);
}

await inferenceLoop('checks', one, 2);
