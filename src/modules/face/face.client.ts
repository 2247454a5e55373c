import { jobIds, type JobPayload } from '../../jobs/catalog.ts';
import type { Producer, WaitOutcome } from '../../jobs/producer.ts';
import { seal, type KeyRing } from '../../lib/crypto.ts';
import { AppError } from '../../lib/errors.ts';
import type { Config } from '../../config.ts';
import type { FairShare } from '../../context.ts';
import { createFairShare } from '../capacity/index.ts';
import type { RedisClient } from '../../lib/redis.ts';
import { faceAad } from './face.job.ts';
import { isAcceptedImage, SELFIE_REFUSAL_DETAIL, SELFIE_REFUSALS, type SelfieRefusal } from './rules.ts';

export const FACE_UNAVAILABLE = 'Face matching is temporarily unavailable, nothing was charged; retry later';

/** What asking a face worker needs; faceClientDeps builds it from the configuration. */
export type FaceClientDeps = { producer: Producer; ring: KeyRing; waitMs: number; prefix: string; orgMaxInFlight: number };
type Deps = FaceClientDeps;

export function faceClientDeps(config: Pick<Config, 'encryptionKeys' | 'FACE_WAIT_MS' | 'REDIS_PREFIX' | 'FACE_ORG_MAX_IN_FLIGHT'>, producer: Producer): FaceClientDeps {
  return { producer, ring: config.encryptionKeys, waitMs: config.FACE_WAIT_MS, prefix: config.REDIS_PREFIX, orgMaxInFlight: config.FACE_ORG_MAX_IN_FLIGHT };
}

export const FACE_TOO_MANY_IN_FLIGHT = 'Too many face matches in flight for this organisation; nothing was charged, retry later';

/** A comparison is never refused for the cap: its selfie check was let in under it (see inTurn). */
const NO_CAP = 2 ** 31;

const turns = new WeakMap<RedisClient, FairShare>();

/**
 * The face workers' fair share: the lookups' scheme (capacity/fair-share.ts) under its own keys. A member
 * lapses a minute after its wait could have ended, should the process holding it die.
 */
export function faceTurns(redis: RedisClient, o: { prefix: string; waitMs: number }): FairShare {
  let share = turns.get(redis);
  if (!share) {
    share = createFairShare(redis, { prefix: o.prefix, resource: 'face', staleMs: o.waitMs + 60_000, defaultLookupMs: 1000 });
    turns.set(redis, share);
  }
  return share;
}

/**
 * Face jobs take turns between organisations, and one organisation has at most FACE_ORG_MAX_IN_FLIGHT
 * of them queued or running: the lookups' fair share (capacity/fair-share.ts) with its own keys. A job's
 * BullMQ priority (lower runs sooner) is its start-time fair-queuing tag, so an organisation sending
 * 50 at once has its jobs tagged one after another, and another organisation's one job runs next
 * instead of after the 50; the face worker reports each start (the virtual time). A selfie check
 * beyond the cap is refused with 429 `face_in_flight_cap` before anything is queued or charged, so an
 * organisation's slow images (each bounded by the decoder's pixel and time limits, rules.ts) hold at
 * most that many turns. The comparison that follows an admitted check is counted but never refused:
 * its lookup may already have been made. The membership is given back when the wait ends.
 */
export async function inTurn<T>(deps: Deps, o: { orgId: number; jobId: string; capped: boolean }, run: (priority: number) => Promise<T>): Promise<T> {
  const share = faceTurns(deps.producer.redis, deps);
  const a = await share.admit({ orgId: o.orgId, referenceId: o.jobId, cap: o.capped ? deps.orgMaxInFlight : NO_CAP });
  if (!a.admitted) throw new AppError('rate_limited', FACE_TOO_MANY_IN_FLIGHT, { headers: { 'Retry-After': '5' }, extra: { code: 'face_in_flight_cap' } });
  try {
    return await run(a.priority);
  } finally {
    await share.finish({ orgId: o.orgId, referenceId: o.jobId }).catch(() => undefined);
  }
}

/** 422 selfie_unreadable unless the bytes are a JPEG, PNG or WebP: told before any job is queued. */
function requireImageFormat(selfie: Buffer): void {
  if (!isAcceptedImage(selfie)) throw selfieRefused('selfie_unreadable');
}

/** An image sealed for one verification's face jobs (associated data `face:<referenceId>`), as jobs carry it. */
export const sealedImage = (ring: KeyRing, referenceId: string, bytes: Buffer) => {
  const s = seal(ring, bytes, faceAad(referenceId));
  return { keyId: s.keyId, data: s.data.toString('base64') };
};

/** A 422 naming why the selfie cannot be used. */
export function selfieRefused(code: string): AppError {
  const known = (SELFIE_REFUSALS as readonly string[]).includes(code) ? (code as SelfieRefusal) : 'selfie_unreadable';
  return new AppError('validation', SELFIE_REFUSAL_DETAIL[known], { extra: { code: known } });
}

function unavailable(w: WaitOutcome<'face.check'> | WaitOutcome<'face.compare'>): AppError {
  return new AppError('unavailable', FACE_UNAVAILABLE, { extra: { code: w.status === 'timeout' ? 'face_timeout' : 'face_failed' }, headers: { 'Retry-After': '5' } });
}

/**
 * Asks a face worker whether the selfie is usable; throws the 422 refusal, 429 beyond the
 * organisation's face jobs in flight, or 503 when no face worker answered in time. The job is
 * removed as it ends, or as nobody waits for it any more (the wait ran out, or `signal`: the caller
 * went away): its sealed selfie leaves Redis with it.
 */
export async function checkSelfie(deps: Deps, orgId: number, referenceId: string, selfie: Buffer, requestId: string, signal?: AbortSignal): Promise<void> {
  requireImageFormat(selfie);
  const jobId = jobIds.faceCheck(referenceId);
  const w = await inTurn(deps, { orgId, jobId, capped: true }, (priority) =>
    deps.producer.enqueueAndWait('face.check', { referenceId, requestId, selfie: sealedImage(deps.ring, referenceId, selfie) }, { jobId, timeoutMs: deps.waitMs, removeWhenDone: true, dropWhenUnwaited: true, priority, ...(signal ? { signal } : {}) }),
  );
  if (w.status !== 'completed') throw unavailable(w);
  if (w.result.outcome === 'refused') throw selfieRefused(w.result.code ?? 'selfie_unreadable');
}

export type FaceComparison = { outcome: 'compared'; distance: number } | { outcome: 'no_reference_photo' };

/** What a live face match's comparison settles with (the catalog's `face.compare` settle part). */
export type ComparisonSettlement = NonNullable<JobPayload<'face.compare'>['settle']>;

/**
 * A live face match's comparison, handed to the face queue by its lookup job once the record is found:
 * the face worker compares and settles the verification (nobody waits here). It takes the
 * organisation's face turn, uncapped (its selfie check was let in under the cap; its lookup is made),
 * which the face worker gives back as the job ends. Queued once per reference (the job id): a lookup
 * job run again hands over nothing new while the first comparison waits or runs.
 */
export async function handOverComparison(
  deps: Deps,
  o: { referenceId: string; requestId: string; selfie: { keyId: string; data: string }; photoBase64: string; settle: ComparisonSettlement },
): Promise<void> {
  const jobId = jobIds.faceCompare(o.referenceId);
  const share = faceTurns(deps.producer.redis, deps);
  const a = await share.admit({ orgId: o.settle.orgId, referenceId: jobId, cap: NO_CAP });
  const priority = a.admitted ? a.priority : 0;
  try {
    await deps.producer.enqueue(
      'face.compare',
      { referenceId: o.referenceId, requestId: o.requestId, selfie: o.selfie, photo: sealedImage(deps.ring, o.referenceId, Buffer.from(o.photoBase64, 'base64')), settle: o.settle },
      // Removed as it ends: the selfie leaves Redis with it.
      { jobId, removeOnComplete: true, removeOnFail: true, ...(priority ? { priority } : {}) },
    );
  } catch (err) {
    await share.finish({ orgId: o.settle.orgId, referenceId: jobId }).catch(() => undefined);
    throw err;
  }
}

/** The face worker's end of handOverComparison: the comparison's turn goes back. */
export async function comparisonTurnEnded(redis: RedisClient, o: { prefix: string; waitMs: number; orgId: number; referenceId: string }): Promise<void> {
  await faceTurns(redis, o).finish({ orgId: o.orgId, referenceId: jobIds.faceCompare(o.referenceId) });
}

/** The selfie against the record's photo (base64 as the authority gave it); 503 when no face worker answered. */
export async function compareWithPhoto(
  deps: Deps,
  orgId: number,
  referenceId: string,
  selfie: Buffer,
  photoBase64: string,
  requestId: string,
  signal?: AbortSignal,
  // The comparison is also the selfie's check (a fixture's record is known at the request): then it
  // takes its turn under the organisation's cap, as a check does, and a refusal is its 422.
  o: { alsoTheCheck?: boolean } = {},
): Promise<FaceComparison> {
  requireImageFormat(selfie);
  const photo = Buffer.from(photoBase64, 'base64');
  if (photo.length === 0) return { outcome: 'no_reference_photo' };
  const jobId = jobIds.faceCompare(referenceId);
  const w = await inTurn(deps, { orgId, jobId, capped: o.alsoTheCheck === true }, (priority) =>
    deps.producer.enqueueAndWait(
      'face.compare',
      { referenceId, requestId, selfie: sealedImage(deps.ring, referenceId, selfie), photo: sealedImage(deps.ring, referenceId, photo) },
      { jobId, timeoutMs: deps.waitMs, removeWhenDone: true, dropWhenUnwaited: true, priority, ...(signal ? { signal } : {}) },
    ),
  );
  if (w.status !== 'completed') throw unavailable(w);
  if (w.result.outcome === 'refused') throw selfieRefused(w.result.code ?? 'selfie_unreadable');
  if (w.result.outcome === 'no_reference_photo' || w.result.distance === undefined) return { outcome: 'no_reference_photo' };
  return { outcome: 'compared', distance: w.result.distance };
}
