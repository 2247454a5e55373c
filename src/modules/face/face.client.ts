import { jobIds } from '../../jobs/catalog.ts';
import type { Producer, WaitOutcome } from '../../jobs/producer.ts';
import { open, seal, type KeyRing } from '../../lib/crypto.ts';
import { AppError } from '../../lib/errors.ts';
import { faceAad } from './face.job.ts';
import { SELFIE_REFUSAL_DETAIL, SELFIE_REFUSALS, type SelfieRefusal } from './rules.ts';

export const FACE_UNAVAILABLE = 'Face matching is temporarily unavailable, nothing was charged; retry later';

type Deps = { producer: Producer; ring: KeyRing; waitMs: number; prefix: string };

/**
 * Face jobs take turns between organisations: a job's BullMQ priority (lower runs sooner) is how many
 * face jobs its organisation has waiting or running, this one included. An organisation sending 50 at
 * once queues them at 1..50, and another organisation's one job, at 1, runs next instead of after the
 * 50. The count lives in Redis (one key per organisation, shared by every API process), is given back
 * when the wait ends, and lapses 10 minutes after its last change should a process die holding it.
 */
async function inTurn<T>(deps: Deps, orgId: number, run: (priority: number) => Promise<T>): Promise<T> {
  const key = `${deps.prefix}:face:turns:${orgId}`;
  const redis = deps.producer.redis;
  let priority: number | null = null;
  try {
    priority = await redis.incr(key);
    await redis.pexpire(key, 600_000);
  } catch {
    // Redis unreachable: the enqueue below says so (503).
  }
  try {
    return await run(Math.max(1, Math.min(priority ?? 1, 2_000_000)));
  } finally {
    if (priority !== null) await redis.decr(key).catch(() => undefined);
  }
}

/** An image sealed for one verification's face jobs (associated data `face:<referenceId>`), as jobs carry it. */
export const sealedImage = (ring: KeyRing, referenceId: string, bytes: Buffer) => {
  const s = seal(ring, bytes, faceAad(referenceId));
  return { keyId: s.keyId, data: s.data.toString('base64') };
};

/** The bytes of an image sealed by sealedImage for this verification. */
export const openedImage = (ring: KeyRing, referenceId: string, image: { keyId: string; data: string }): Buffer =>
  open(ring, { keyId: image.keyId, data: Buffer.from(image.data, 'base64') }, faceAad(referenceId));

/** A 422 naming why the selfie cannot be used. */
export function selfieRefused(code: string): AppError {
  const known = (SELFIE_REFUSALS as readonly string[]).includes(code) ? (code as SelfieRefusal) : 'selfie_unreadable';
  return new AppError('validation', SELFIE_REFUSAL_DETAIL[known], { extra: { code: known } });
}

function unavailable(w: WaitOutcome<'face.check'> | WaitOutcome<'face.compare'>): AppError {
  return new AppError('unavailable', FACE_UNAVAILABLE, { extra: { code: w.status === 'timeout' ? 'face_timeout' : 'face_failed' }, headers: { 'Retry-After': '5' } });
}

/**
 * Asks a face worker whether the selfie is usable; throws the 422 refusal, or 503 when no face worker
 * answered in time. The job is removed as it ends: its sealed selfie leaves Redis with it.
 */
export async function checkSelfie(deps: Deps, orgId: number, referenceId: string, selfie: Buffer, requestId: string): Promise<void> {
  const w = await inTurn(deps, orgId, (priority) =>
    deps.producer.enqueueAndWait('face.check', { referenceId, requestId, selfie: sealedImage(deps.ring, referenceId, selfie) }, { jobId: jobIds.faceCheck(referenceId), timeoutMs: deps.waitMs, removeWhenDone: true, priority }),
  );
  if (w.status !== 'completed') throw unavailable(w);
  if (w.result.outcome === 'refused') throw selfieRefused(w.result.code ?? 'selfie_unreadable');
}

export type FaceComparison = { outcome: 'compared'; distance: number } | { outcome: 'no_reference_photo' };

/** The selfie against the record's photo (base64 as the authority gave it); 503 when no face worker answered. */
export async function compareWithPhoto(deps: Deps, orgId: number, referenceId: string, selfie: Buffer, photoBase64: string, requestId: string): Promise<FaceComparison> {
  const photo = Buffer.from(photoBase64, 'base64');
  if (photo.length === 0) return { outcome: 'no_reference_photo' };
  const w = await inTurn(deps, orgId, (priority) =>
    deps.producer.enqueueAndWait(
      'face.compare',
      { referenceId, requestId, selfie: sealedImage(deps.ring, referenceId, selfie), photo: sealedImage(deps.ring, referenceId, photo) },
      { jobId: jobIds.faceCompare(referenceId), timeoutMs: deps.waitMs, removeWhenDone: true, priority },
    ),
  );
  if (w.status !== 'completed') throw unavailable(w);
  if (w.result.outcome === 'refused') throw selfieRefused(w.result.code ?? 'selfie_unreadable');
  if (w.result.outcome === 'no_reference_photo' || w.result.distance === undefined) return { outcome: 'no_reference_photo' };
  return { outcome: 'compared', distance: w.result.distance };
}
