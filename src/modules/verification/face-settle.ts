import type { Job } from 'bullmq';
import type { DatabasePool } from 'slonik';
import type { Config } from '../../config.ts';
import { isFinalAttempt } from '../../context.ts';
import { jobIds, QUEUES, type JobPayload, type JobResult } from '../../jobs/catalog.ts';
import type { JobWait, Producer, WaitOutcome } from '../../jobs/producer.ts';
import { openJson, sealJson } from '../../lib/crypto.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Metrics } from '../../lib/metrics.ts';
import type { RedisClient } from '../../lib/redis.ts';
import { comparisonTurnEnded, faceClientDeps, handOverComparison, runFaceCompare, type ComparisonSettlement, type FaceJobDeps } from '../face/index.ts';
import { organisationSettings } from '../organisations/index.ts';
import { FOLLOW_UP_BOTH, type DebitFollowUp } from '../wallet/index.ts';
import { faceAnswerOf, livenessRequiredOf, openedLivenessCheck, type FaceKept } from './face-kept.ts';
import { personRecordSchema, type PersonRecord } from './person.ts';
import { keyRing } from './sealing.ts';
import { settle, type AlsoInTransaction, type Decision } from './settle.ts';
import { subjectOfRecord } from './subject.ts';
import * as repo from './verification.repository.ts';
import type { VerificationRow } from './verification.schemas.ts';

/** Why a face match whose job was lost ends failed: its selfie lived only in that job. */
export const FACE_LOST_DETAIL = 'the selfie was lost with its job; send the face match again';
/** Why a face match whose comparison could not be made ends failed (its unit released). */
export const FACE_NOT_COMPARED_DETAIL = 'no face worker compared the selfie in time; nothing was charged';

/** The found record as the comparison job carries it: sealed for this verification's comparison only. */
const recordAad = (referenceId: string) => `face-record:${referenceId}`;

/** What a face match's lookup job carries besides its query: the sealed selfie (and liveness check). */
export type FaceOfLookup = { selfie: { keyId: string; data: string }; orgId: number; requestId: string; liveness?: { keyId: string; data: string } };

/**
 * A live face match's lookup found its record: the comparison is handed to the face queue
 * (handOverComparison) and the lookup job completes at once, giving its lookup slots back; the unit
 * stays held on the pending row. The face worker compares and settles (runComparisonJob). The record
 * travels sealed with the selfie (its own associated data), with what the settlement needs.
 */
export async function handOver(
  deps: { config: Config; producer: Producer },
  referenceId: string,
  face: FaceOfLookup,
  record: PersonRecord,
  o: { matchOnly: boolean; attempts: number; report: boolean },
): Promise<void> {
  const sealed = sealJson(deps.config.encryptionKeys, record, recordAad(referenceId));
  const settlement: ComparisonSettlement = {
    orgId: face.orgId,
    record: { keyId: sealed.keyId, data: sealed.data.toString('base64') },
    attempts: o.attempts,
    matchOnly: o.matchOnly,
    report: o.report,
    ...(face.liveness ? { liveness: face.liveness } : {}),
    // A synchronous face match is compared within FACE_WAIT_MS of its lookup's answer, or not at all:
    // its caller waited that long (then was told to requery), and a comparison an hour later would
    // charge a call the caller may have sent again. An asynchronous one waits for a face worker.
    ...(o.report ? {} : { notAfter: Date.now() + deps.config.FACE_WAIT_MS }),
  };
  await handOverComparison(faceClientDeps(deps.config, deps.producer), { referenceId, requestId: face.requestId, selfie: face.selfie, photoBase64: record.image, settle: settlement });
}

/** What the face worker's comparison job needs: the engine, the database and what follows a debit. */
export type ComparisonJobDeps = {
  db: DatabasePool;
  config: Config;
  /** The face worker's connection: the comparison's face turn is given back on it. */
  redis: RedisClient;
  faceJob: FaceJobDeps;
  /** alerts' followDebit, handed in by the wiring (verification does not import alerts). */
  followDebit: (orgId: number, followUp: DebitFollowUp, log: Logger) => Promise<void>;
  /** The face worker's own registry: the units its settlements debited. */
  metrics: Pick<Metrics, 'unitsDebited'>;
};

type ComparisonResult = JobResult<'face.compare'>;

/** A settled row as the comparison job answers it (as a lookup job's result would). */
function answerOfRow(row: VerificationRow | null): ComparisonResult {
  if (!row) return { outcome: 'failed', code: 'unknown_reference' };
  if (row.status === 'found') return { outcome: 'found' };
  if (row.status === 'not_found') return row.failure_code ? { outcome: 'not_found', code: row.failure_code } : { outcome: 'not_found' };
  if (row.status === 'pending') return { outcome: 'failed', code: 'still_pending' };
  return { outcome: 'failed', code: row.failure_code ?? 'face_unavailable' };
}

/**
 * A face match that no face worker compared (its job failed past its attempts, nobody ran it within
 * the API's wait, or the sweep found it waiting too long): failed `face_unavailable`, the unit released
 * through the one release statement, nothing charged. settle()'s status guard decides once, whoever of
 * the face worker, the API and the sweep comes first. True when this call decided it.
 */
export async function endUncompared(db: DatabasePool, config: Config, referenceId: string, report: boolean): Promise<boolean> {
  const decision = { kind: 'failed' as const, code: 'face_unavailable', detail: FACE_NOT_COMPARED_DETAIL };
  return (await settle(db, config.encryptionKeys, { referenceId, keyId: null, decision, attempts: 0, report })) !== null;
}

/**
 * The `face.compare` job, in the face worker. A fixture's (no `settle`): the distance only. A live face
 * match's: compares the selfie with the found record's photo and SETTLES the verification through
 * settle() (the lookup's unit captured, the comparison stored and its extra units debited in the
 * settlement's one transaction; an asynchronous one's `verification.completed` with it), follows the
 * debit (alerts' followDebit, as the lookup job does for its own), and gives the face turn back. A rerun
 * (a crash between the settlement's COMMIT and the job's completion) finds the row decided and answers
 * from it: the status guard never lets it charge twice. A comparison that throws is retried by BullMQ;
 * its last attempt ends the verification failed `face_unavailable`.
 */
export async function runComparisonJob(deps: ComparisonJobDeps, p: JobPayload<'face.compare'>, job: Pick<Job, 'attemptsMade' | 'opts'>, log: Logger): Promise<ComparisonResult> {
  const s = p.settle;
  // A fixture's comparison: the distance only, for the API that waits (nothing to settle or charge).
  if (!s) return runFaceCompare(deps.faceJob, p);
  const ref = p.referenceId;
  const turnEnded = () =>
    comparisonTurnEnded(deps.redis, { prefix: deps.config.REDIS_PREFIX, waitMs: deps.config.FACE_WAIT_MS, orgId: s.orgId, referenceId: ref }).catch(() => undefined);
  let result: ComparisonResult;
  try {
    result = await compareAndSettle(deps, p, s, log);
  } catch (err) {
    if (!isFinalAttempt(job)) throw err;
    // Its last attempt: nothing more will compare it. Released here (once: the status guard); should
    // that fail too (PostgreSQL away), the sweep releases it, and the turn goes back all the same.
    try {
      if (await endUncompared(deps.db, deps.config, ref, s.report)) log.warn({ referenceId: ref, code: 'face_unavailable' }, 'face match not compared; unit released');
    } finally {
      await turnEnded();
    }
    throw err;
  }
  await turnEnded();
  return result;
}

async function compareAndSettle(deps: ComparisonJobDeps, p: JobPayload<'face.compare'>, s: ComparisonSettlement, log: Logger): Promise<ComparisonResult> {
  const ring = deps.config.encryptionKeys;
  const ref = p.referenceId;
  const followed = async (followUp: DebitFollowUp | null) => {
    if (followUp) await deps.followDebit(s.orgId, followUp, log);
  };
  const row = await repo.findVerification(deps.db, ref);
  if (!row || row.status !== 'pending' || !row.key_id) {
    // Decided before: by an earlier run of this job (which may have stopped before following its
    // debit: followed here, looking for both), by the API's wait running out, or by the sweep.
    if (row?.status === 'found') await followed(FOLLOW_UP_BOTH);
    return answerOfRow(row);
  }
  if (s.notAfter !== undefined && Date.now() > s.notAfter) {
    // Reached after its caller's wait: not compared, nothing charged (endUncompared's status guard).
    if (await endUncompared(deps.db, deps.config, ref, s.report)) log.warn({ referenceId: ref, code: 'face_unavailable' }, 'face match reached after its wait; unit released');
    return answerOfRow(await repo.findVerification(deps.db, ref));
  }
  const record = personRecordSchema.parse(openJson(ring, { keyId: s.record.keyId, data: Buffer.from(s.record.data, 'base64') }, recordAad(ref))) as PersonRecord;
  const compared = record.image === '' ? { outcome: 'no_reference_photo' as const } : await runFaceCompare(deps.faceJob, p);
  let decision: Decision;
  let store: AlsoInTransaction | undefined;
  // Debited with the lookup's unit when the settlement commits: the comparison's extra units, if paid.
  let extraPaid = 0;
  if (compared.outcome === 'refused') {
    // The selfie passed its check at the request but not here (another model run): refused, unit released.
    decision = { kind: 'failed', code: compared.code ?? 'selfie_unreadable', detail: 'the selfie was refused at its comparison' };
  } else {
    const settings = await organisationSettings(deps.db, s.orgId);
    // A selfie that was a passed liveness check's front frame: the check is kept with the comparison.
    const check = s.liveness ? openedLivenessCheck(ring, ref, s.liveness) : undefined;
    const comparison = compared.outcome === 'compared' && compared.distance !== undefined ? { outcome: 'compared' as const, distance: compared.distance } : { outcome: 'no_reference_photo' as const };
    const answer = faceAnswerOf(comparison, settings.face_match_threshold, check);
    const kept: FaceKept = { ...(s.matchOnly ? {} : { record }), face: answer, ...livenessRequiredOf(settings) };
    decision = { kind: 'found', record: kept, transactionId: record.transaction_id, subjectHash: subjectOfRecord(deps.config.SUBJECT_HASH_KEY, record) };
    // The liveness check's units come on top of the comparison's, charged with them (never without).
    const extra = answer.status === 'compared' ? deps.config.FACE_MATCH_UNITS - 1 + (check ? deps.config.LIVENESS_UNITS : 0) : 0;
    if (extra > 0) {
      store = async (tx, stored) => {
        // A transaction retried (a deadlock) runs this again: only its last run's payment counts.
        extraPaid = 0;
        const sealing = keyRing(ring, stored.keyId)[0]!;
        const paid = await repo.settleFaceOutcome(tx, { referenceId: ref, orgId: stored.orgId, recordEnc: sealJson([sealing], kept, ref).data, keyId: sealing.id, units: extra });
        // The wallet was drained since the request's check (concurrent calls took the units): the
        // lookup is charged and the comparison is the answer (settled with it), so its extra units
        // are waived rather than a 402 that would read as "nothing charged". A race only.
        if (!paid) log.warn({ referenceId: ref }, 'face match compared but its extra units could not be paid; waived');
        else extraPaid = extra;
      };
    }
  }
  const settled = await settle(deps.db, ring, { referenceId: ref, keyId: row.key_id, decision, attempts: s.attempts, report: s.report, ...(store ? { alsoInTransaction: store } : {}) });
  if (!settled) {
    const now = await repo.findVerification(deps.db, ref);
    if (now?.status === 'found') await followed(FOLLOW_UP_BOTH);
    return answerOfRow(now);
  }
  if (decision.kind !== 'found') {
    log.warn({ referenceId: ref, code: decision.code }, 'face match refused at its comparison; unit released');
    return { outcome: 'failed', code: decision.code };
  }
  deps.metrics.unitsDebited.inc(1 + extraPaid);
  await followed('followUp' in settled ? settled.followUp : null);
  return { outcome: 'found' };
}

/**
 * A face match's comparison that nobody answered in time (the API's wait ran out, or the sweep found
 * it waiting too long): its job is taken off the queue if no face worker has started it (its selfie
 * leaves Redis; its face turn goes back), and the verification ends failed `face_unavailable`, unless
 * something decided it first (the status guard). A comparison already running finishes and finds the
 * row decided: it charges nothing.
 */
export async function dropUnansweredComparison(deps: { db: DatabasePool; config: Config; producer: Producer }, o: { referenceId: string; orgId: number; report: boolean }): Promise<boolean> {
  await removeIdleComparison(deps, o);
  return endUncompared(deps.db, deps.config, o.referenceId, o.report);
}

/**
 * Takes a face match's comparison job off the queue if no face worker has started it (its sealed
 * selfie, photo and record leave Redis; its face turn goes back): for a verification decided without
 * it. Best effort: a job left behind finds the row decided when it runs, and charges nothing.
 */
export async function removeIdleComparison(deps: { config: Config; producer: Producer }, o: { referenceId: string; orgId: number }): Promise<void> {
  const removed = await deps.producer
    .queue(QUEUES.face)
    .remove(jobIds.faceCompare(o.referenceId))
    .catch(() => 0);
  if (removed) await comparisonTurnEnded(deps.producer.redis, { prefix: deps.config.REDIS_PREFIX, waitMs: deps.config.FACE_WAIT_MS, orgId: o.orgId, referenceId: o.referenceId }).catch(() => undefined);
}

/** A face match's comparison job: its state ('missing' when there is none: never queued, or ended and removed) and when it was queued. */
export async function comparisonState(producer: Producer, referenceId: string): Promise<{ state: string; queuedAt: number }> {
  const job = await producer.queue(QUEUES.face).getJob(jobIds.faceCompare(referenceId));
  return job ? { state: await job.getState(), queuedAt: job.timestamp } : { state: 'missing', queuedAt: 0 };
}

/** A job's state (or 'missing') that says it will not run again: ended, removed, or never there. */
export const jobGone = (state: string): boolean => state === 'missing' || state === 'failed' || state === 'completed' || state === 'unknown';

/** Whether a face match's comparison job waits or runs (queued, not yet ended). */
export async function comparisonQueued(producer: Producer, referenceId: string): Promise<boolean> {
  return !jobGone((await comparisonState(producer, referenceId)).state);
}

/**
 * A synchronous face match after its lookup's wait: when the lookup handed the comparison over, its
 * job's end (within what is left of the request's budget). A comparison that failed past its attempts
 * or did not end in time is dropped (off the queue if no face worker started it) and the verification
 * ended failed `face_unavailable`, once whoever tries (the face worker's last attempt does the same).
 * When the lookup's own wait ran out, a comparison already queued is treated alike; none queued yet,
 * the lookup goes on and the row answers (pending). The caller then answers from the row.
 */
export async function waitForComparison(
  deps: { db: DatabasePool; config: Config; producer: Producer; logger: Logger },
  o: { ref: string; orgId: number; waited: WaitOutcome<'verification.lookup'> | undefined; compareWait: JobWait<'face.compare'> },
): Promise<void> {
  const handedOver = o.waited?.status === 'completed' && o.waited.result.compareHandedOver === true;
  if (!handedOver) {
    o.compareWait.stop();
    if (o.waited?.status === 'completed') return;
    if ((await comparisonState(deps.producer, o.ref).catch(() => ({ state: 'missing' }))).state === 'missing') return;
  } else {
    const compared = await o.compareWait.done;
    // Its end: the settled row says how (a missed event falls through to the row too).
    if (compared.status === 'completed') return;
  }
  if (await dropUnansweredComparison(deps, { referenceId: o.ref, orgId: o.orgId, report: false })) deps.logger.warn({ referenceId: o.ref, code: 'face_unavailable' }, 'face match not compared in time; unit released');
}
