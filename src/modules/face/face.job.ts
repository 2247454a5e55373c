import type { JobPayload, JobResult } from '../../jobs/catalog.ts';
import { open, type KeyRing } from '../../lib/crypto.ts';
import type { FaceEngine } from './engine.ts';

/** What the face jobs need: the engine (the model, loaded once per process) and the keys to open images. */
export type FaceJobDeps = { engine: FaceEngine; ring: KeyRing };

/** The associated data every sealed face image carries: it opens for this verification only. */
export const faceAad = (referenceId: string) => `face:${referenceId}`;

function opened(deps: FaceJobDeps, referenceId: string, image: { keyId: string; data: string }): Buffer {
  return open(deps.ring, { keyId: image.keyId, data: Buffer.from(image.data, 'base64') }, faceAad(referenceId));
}

/** The `face.check` job: is the selfie usable (one face, large enough)? Nothing of it is returned. */
export async function runFaceCheck(deps: FaceJobDeps, p: JobPayload<'face.check'>): Promise<JobResult<'face.check'>> {
  return checkedAsSelfie(deps.engine, opened(deps, p.referenceId, p.selfie));
}

/** An image checked as a selfie is (a `face.check`, or a passed liveness check's front frame in its judging job). */
export async function checkedAsSelfie(engine: Pick<FaceEngine, 'selfie'>, image: Buffer): Promise<{ outcome: 'accepted' } | { outcome: 'refused'; code: string }> {
  const judged = await engine.selfie(image);
  return 'refusal' in judged ? { outcome: 'refused', code: judged.refusal } : { outcome: 'accepted' };
}

/** The `face.compare` job: the distance between the selfie's face and the record photo's one face. */
export async function runFaceCompare(deps: FaceJobDeps, p: JobPayload<'face.compare'>): Promise<JobResult<'face.compare'>> {
  const selfie = await deps.engine.selfie(opened(deps, p.referenceId, p.selfie));
  if ('refusal' in selfie) return { outcome: 'refused', code: selfie.refusal };
  const reference = await deps.engine.reference(opened(deps, p.referenceId, p.photo));
  if (!reference) return { outcome: 'no_reference_photo' };
  return { outcome: 'compared', distance: deps.engine.distance(selfie.descriptor, reference) };
}
