import { readFileSync } from 'node:fs';
import { createFaceEngine } from '../../src/modules/face/index.ts';
import { repoPath } from '../lib/proc.ts';
import { comparisonInferences, inferenceLoop } from './inference-loop.ts';
import { lowerPriority } from '../../src/lib/process.ts';

/**
 * The face match's floor: the service's own pipeline (src/modules/face), bare, in a loop on the same
 * two images: the selfie and the record photo described and compared, as a face worker does for one
 * found fixture's match (one face.compare job, which is also the selfie's check), with no HTTP, queue,
 * database or lookup. Runs
 * FLOOR_SECONDS after a short warm-up (at a face worker's priority, FACE_NICE), or FLOOR_COUNT matches one at a time, and prints one JSON line:
 * {matches, seconds, p50Ms, rssKb}.
 */
const selfie = readFileSync(repoPath('src/simulators/identity-authority/faces/grace-hopper.selfie.jpg'));
const photo = readFileSync(repoPath('src/simulators/identity-authority/faces/grace-hopper.reference.jpg'));
// The same CPU priority as a face worker (FACE_NICE added to the nice value, as workers/face.ts does).
lowerPriority(Number(process.env.FACE_NICE ?? '10'));
const engine = await createFaceEngine();

await inferenceLoop('matches', () => comparisonInferences(engine, selfie, photo), 3);
