import { randomBytes } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { jobIds } from '../../jobs/catalog.ts';
import type { Producer } from '../../jobs/producer.ts';
import type { Clock } from '../../lib/clock.ts';
import { seal, type KeyRing } from '../../lib/crypto.ts';
import { AppError } from '../../lib/errors.ts';
import { FACE_MODEL, faceClientDeps, inFaceTurn } from '../face/index.ts';
import { frameHashKey, frameHashStore, framesReused } from './frame-hashes.ts';
import { withReuse } from './judge.ts';
import { livenessAad } from './liveness.job.ts';
import { markSessionUsed } from './liveness.repository.ts';
import { LIVENESS_REASONS, livenessResultSchema, type LivenessCheck, type LivenessResult, type Step } from './liveness.schemas.ts';
import { sessionToJudge, settleSession } from './sessions.ts';

export const LIVENESS_UNAVAILABLE = 'Liveness checks are temporarily unavailable, nothing was charged and the session is still open; retry later';

export type JudgeSessionDeps = {
  db: DatabasePool;
  clock: Clock;
  producer: Producer;
  config: {
    encryptionKeys: KeyRing;
    SUBJECT_HASH_KEY: string;
    FACE_WAIT_MS: number;
    REDIS_PREFIX: string;
    FACE_ORG_MAX_IN_FLIGHT: number;
    LIVENESS_SESSION_TTL_SECONDS: number;
    LIVENESS_OPEN_SESSIONS_PER_ORG: number;
    LIVENESS_FRAME_HASH_DAYS: number;
  };
};

/** A frame as the face match decoded it: its bytes live in the request's memory and, sealed, in its job. */
export type DecodedFrame = { step: Step; image: Buffer; captured_at_ms: number };

/** How a session's frames were judged: failed (the result), or passed with the selfie to compare and what to keep. */
export type SessionJudged =
  | { status: 'failed'; result: LivenessResult }
  // frontCheck: the selfie (the front frame) checked in the same job, as face.check would have.
  | { status: 'passed'; result: LivenessResult; selfie: Buffer; check: LivenessCheck; frontCheck?: { outcome: 'accepted' | 'refused'; code?: string | undefined } };

/**
 * A face match's liveness check, before anything is looked up: the session (404, 410 or 409 as
 * sessionToJudge refuses it), its frames judged by a face worker (`liveness.judge`: the frames
 * travel sealed for this session and leave Redis with the job), `frames_reused` from the keyed
 * hashes (any organisation's), and the judgement recorded on the session. Passed: the session is
 * `used` by this face match and its selfie is the front frame the poses were measured from. A face
 * worker not answering within twice FACE_WAIT_MS (up to 12 frames to read) is a 503 that leaves the
 * session open and records no hash: the same frames may be sent again.
 */
export async function judgeSession(deps: JudgeSessionDeps, orgId: number, sessionId: string, frames: readonly DecodedFrame[], requestId: string, signal?: AbortSignal): Promise<SessionJudged> {
  const session = await sessionToJudge(deps, orgId, sessionId);
  const ring = deps.config.encryptionKeys;
  const aad = livenessAad(session.id);
  const jobId = jobIds.livenessJudge(session.id, randomBytes(6).toString('hex'));
  // A face job like the selfie's check it includes: it takes the organisation's face turn, under
  // FACE_ORG_MAX_IN_FLIGHT (429 `face_in_flight_cap` beyond, before the frames are judged).
  const faceDeps = faceClientDeps(deps.config, deps.producer);
  const w = await inFaceTurn(faceDeps, { orgId, jobId, capped: true }, (priority) => deps.producer.enqueueAndWait(
    'liveness.judge',
    {
      sessionId: session.id,
      requestId,
      challenges: session.challenges,
      frames: frames.map((f) => {
        const s = seal(ring, f.image, aad);
        return { step: f.step, captured_at_ms: f.captured_at_ms, image: { keyId: s.keyId, data: s.data.toString('base64') } };
      }),
    },
    { jobId, timeoutMs: 2 * deps.config.FACE_WAIT_MS, removeWhenDone: true, dropWhenUnwaited: true, priority, ...(signal ? { signal } : {}) },
  ));
  if (w.status !== 'completed') throw new AppError('unavailable', LIVENESS_UNAVAILABLE, { extra: { code: w.status === 'timeout' ? 'face_timeout' : 'face_failed' }, headers: { 'Retry-After': '5' } });
  const { front, frontCheck, ...judged } = w.result;
  const reused = await framesReused(
    frameHashKey(deps.config.SUBJECT_HASH_KEY),
    frames.map((f) => f.image),
    frameHashStore(deps.db, deps.clock, deps.config.LIVENESS_FRAME_HASH_DAYS),
  );
  const result = withReuse(livenessResultSchema.parse(judged), reused);
  await settleSession(deps, orgId, session.id, result);
  if (result.status === 'failed' || front === undefined || !frames[front]) return { status: 'failed', result };
  await markSessionUsed(deps.db, orgId, session.id);
  return {
    status: 'passed',
    result,
    selfie: frames[front]!.image,
    ...(frontCheck ? { frontCheck } : {}),
    check: { session_id: session.id, challenges: session.challenges, steps: result.steps, checks: [...LIVENESS_REASONS], model: FACE_MODEL },
  };
}

/** The 422 of a failed liveness check: nothing looked up or charged. */
export function livenessFailed(result: LivenessResult): AppError {
  return new AppError('validation', `The liveness check failed (${result.reasons.join(', ')}): start a new session and try again`, {
    extra: { code: 'liveness_failed', liveness: { status: 'failed', reasons: result.reasons, steps: result.steps } },
  });
}
