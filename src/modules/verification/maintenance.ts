import type { DatabasePool } from 'slonik';
import type { Config } from '../../config.ts';
import { jobIds, QUEUES, type JobResult } from '../../jobs/catalog.ts';
import type { Producer } from '../../jobs/producer.ts';
import type { Clock } from '../../lib/clock.ts';
import { describe } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import type { FairShare } from '../../context.ts';
import { deadlineOf, enqueueBackgroundLookup } from './background.ts';
import * as idem from './idempotency.ts';
import { comparisonState, dropUnansweredComparison, removeIdleComparison, FACE_LOST_DETAIL, jobGone } from './face-settle.ts';
import { settle } from './settle.ts';
import { VNIN_LOST_DETAIL } from './vnin.ts';
import * as repo from './verification.repository.ts';

/** What the scheduled verification jobs need; WorkerDeps provides it. */
export type MaintenanceDeps = { db: DatabasePool; config: Config; clock: Clock; producer: Producer; fairShare: FairShare };

// A pending row younger than this still belongs to its API request and its job (the request waits
// VERIFY_WAIT_MS; the job's own retries fit well inside), so the sweep never touches it.
const SWEEP_MIN_AGE_FACTOR = 4;
// Past this, the lookup is given up: the unit goes back and the requery answers "failed".
const SWEEP_GIVE_UP_MS = 3600 * 1000;
const SWEEP_BATCH = 100;

/** Removes a job that no worker holds (an active job's lock refuses removal; it settles by itself). */
async function removeIdleJob(queue: ReturnType<Producer['queue']>, jobId: string, log: Logger): Promise<void> {
  try {
    const job = await queue.getJob(jobId);
    if (job && (await job.getState()) !== 'active') await job.remove();
  } catch (err) {
    log.warn({ err: describe(err), jobId }, 'lookup job not removed; it settles nothing when it runs');
  }
}

/**
 * `verification.sweep`: synchronous pending rows whose job was lost (Redis flushed, failed past its
 * attempts) are queued again under the same job id (a vNIN's cannot be: its token went with the job,
 * so it is failed and released); rows pending for over an hour are failed and released. A face match
 * is left to its lookup and then its comparison while either waits or runs (sweepFaceRow).
 * It cannot race the normal path into a double debit: re-adding an existing job id is a no-op, and
 * every outcome goes through settle()'s status guard and the one-debit unique index.
 */
export async function sweepPending(deps: MaintenanceDeps, log: Logger): Promise<JobResult<'verification.sweep'>> {
  const now = deps.clock.now().getTime();
  const rows = await repo.findStalePending(deps.db, new Date(now - deps.config.VERIFY_WAIT_MS * SWEEP_MIN_AGE_FACTOR), SWEEP_BATCH);
  const queue = deps.producer.queue(QUEUES.lookups);
  let requeued = 0;
  let released = 0;
  for (const row of rows) {
    const ref = row.reference_id;
    const jobId = jobIds.lookup(ref);
    if (row.mode === 'face') {
      // A synchronous one's comparison is made within FACE_WAIT_MS of its hand-over, or not at all.
      if (await sweepFaceRow(deps, log, { ...row, report: false }, { now, giveUpLookup: row.created_at.getTime() < now - SWEEP_GIVE_UP_MS, comparisonWaitMs: deps.config.FACE_WAIT_MS })) released++;
      continue;
    }
    if (row.created_at.getTime() < now - SWEEP_GIVE_UP_MS) {
      const decision = { kind: 'failed' as const, code: 'lookup_abandoned', detail: 'no outcome within one hour' };
      if (await settle(deps.db, deps.config.encryptionKeys, { referenceId: ref, keyId: null, decision, attempts: 0 })) released++;
      // A job still waiting would look its query up for nothing; a vNIN job holds a sealed token.
      await removeIdleJob(queue, jobId, log);
      continue;
    }
    const job = await queue.getJob(jobId);
    const state = job ? await job.getState() : 'missing';
    if (state !== 'missing' && state !== 'failed' && state !== 'completed' && state !== 'unknown') continue;
    if (row.mode === 'vnin') {
      // The token lived only in the lost job: nothing to look up again. The unit goes back.
      const decision = { kind: 'failed' as const, code: 'lookup_abandoned', detail: VNIN_LOST_DETAIL };
      if (await settle(deps.db, deps.config.encryptionKeys, { referenceId: ref, keyId: null, decision, attempts: 0 })) released++;
      if (job) await removeIdleJob(queue, jobId, log);
      continue;
    }
    try {
      if (job) await job.remove();
      // Overdue already: the front of the queue (every lookup job carries a priority; see fair-share.ts).
      await deps.producer.enqueue('verification.lookup', { referenceId: ref, orgId: row.org_id }, { jobId, priority: 1 });
      requeued++;
    } catch (err) {
      log.warn({ err: describe(err), referenceId: ref }, 'lookup not re-queued; next sweep retries');
    }
  }
  const bg = await sweepBackground(deps, log, now);
  requeued += bg.requeued;
  released += bg.released;
  if (requeued > 0 || released > 0) log.info({ requeued, released }, 'verification sweep');
  return { requeued, released };
}

// A background row younger than this may still be on its way into the queue (the API queues it
// right after COMMIT): not looked for yet.
const BACKGROUND_MIN_AGE_MS = 60_000;
const BACKGROUND_PAGE = 1000;
// Where this process's walk through the waiting background rows stopped; the sweep looks at one
// page per run, so a job lost with Redis is found within (waiting rows / 1000) minutes.
let backgroundCursor: readonly [string, string] | null = null;

/**
 * Asynchronous and batch rows queued for the authority are left alone by the rules above: they end
 * by their lookup, by cancel, or ASYNC_MAX_WAIT_HOURS after acceptance (ended here as failed
 * `upstream_unavailable`, unit released, if their job did not do it first). One whose job was lost
 * (Redis flushed or failed over, the job failed on our own faults) is queued again.
 */
async function sweepBackground(deps: MaintenanceDeps, log: Logger, now: number): Promise<{ requeued: number; released: number }> {
  const rows = await repo.findWaitingBackground(deps.db, { acceptedBefore: new Date(now - BACKGROUND_MIN_AGE_MS), after: backgroundCursor, limit: BACKGROUND_PAGE });
  backgroundCursor = rows.length === BACKGROUND_PAGE ? [rows.at(-1)!.created_key, rows.at(-1)!.reference_id] : null;
  const queue = deps.producer.queue(QUEUES.lookups);
  let requeued = 0;
  let released = 0;
  for (const row of rows) {
    const ref = row.reference_id;
    const acceptedAt = row.created_at.getTime();
    if (now >= deadlineOf(deps.config, acceptedAt)) {
      const decision = { kind: 'failed' as const, code: 'upstream_unavailable', detail: 'no answer within ASYNC_MAX_WAIT_HOURS' };
      if (await settle(deps.db, deps.config.encryptionKeys, { referenceId: ref, keyId: null, decision, attempts: 0, report: row.delivery === 'async' })) released++;
      // A face match's comparison may still wait for a face worker: its sealed images leave Redis now.
      if (row.mode === 'face') await removeIdleComparison(deps, { referenceId: ref, orgId: row.org_id });
      continue;
    }
    try {
      if (row.mode === 'face') {
        // An asynchronous face match waits out outages like any background lookup: never given up here.
        if (await sweepFaceRow(deps, log, { ...row, report: row.delivery === 'async' }, { now, giveUpLookup: false, comparisonWaitMs: SWEEP_GIVE_UP_MS })) released++;
        continue;
      }
      const job = await queue.getJob(jobIds.lookup(ref));
      const state = job ? await job.getState() : 'missing';
      if (state !== 'missing' && state !== 'failed' && state !== 'completed' && state !== 'unknown') continue;
      if (job) await job.remove();
      // A batch row keeps its batch, so that its end feeds the batch again.
      await enqueueBackgroundLookup(deps, { referenceId: ref, orgId: row.org_id, delivery: row.delivery, acceptedAt, ...(row.batch_id ? { batchId: row.batch_id } : {}) });
      requeued++;
    } catch (err) {
      log.warn({ err: describe(err), referenceId: ref }, 'background lookup not re-queued; next sweep retries');
    }
  }
  return { requeued, released };
}

/**
 * A pending face match: its lookup job, then the comparison it hands to the face queue (face-settle.ts).
 * Read in that order, since a lookup job queues its comparison before it completes: a lookup seen gone
 * has queued its comparison already, or never will. While the lookup is on its way (unless given up:
 * `giveUpLookup`) or its comparison runs, the row is theirs. A comparison waiting for a face worker
 * over SWEEP_GIVE_UP_MS is dropped and the match ends failed `face_unavailable`, nothing charged. Both
 * gone: the selfie lived only in them, nothing to compare, so failed `lookup_abandoned`, unit released.
 */
async function sweepFaceRow(
  deps: MaintenanceDeps,
  log: Logger,
  row: { reference_id: string; org_id: number; report: boolean },
  o: { now: number; giveUpLookup: boolean; comparisonWaitMs: number },
): Promise<boolean> {
  const ref = row.reference_id;
  const lookups = deps.producer.queue(QUEUES.lookups);
  const lookup = await lookups.getJob(jobIds.lookup(ref));
  const lookupGone = jobGone(lookup ? await lookup.getState() : 'missing');
  if (!lookupGone && !o.giveUpLookup) return false;
  const compare = await comparisonState(deps.producer, ref);
  // A comparison running is left to finish, unless the row is given up (its face worker may have died
  // with no other left to notice its stalled job): a late one finds the row decided and charges nothing.
  if (compare.state === 'active' && !o.giveUpLookup) return false;
  if (!jobGone(compare.state)) {
    if (!o.giveUpLookup && compare.queuedAt >= o.now - o.comparisonWaitMs) return false;
    const dropped = await dropUnansweredComparison(deps, { referenceId: ref, orgId: row.org_id, report: row.report });
    if (dropped) log.warn({ referenceId: ref, code: 'face_unavailable' }, 'face match not compared in time; unit released');
    return dropped;
  }
  const detail = lookupGone ? FACE_LOST_DETAIL : 'no outcome within one hour';
  const decision = { kind: 'failed' as const, code: 'lookup_abandoned', detail };
  const released = (await settle(deps.db, deps.config.encryptionKeys, { referenceId: ref, keyId: null, decision, attempts: 0, report: row.report })) !== null;
  if (lookup) await removeIdleJob(lookups, jobIds.lookup(ref), log);
  return released;
}

const ERASE_BATCH = 500;
const ERASE_MAX_BATCHES = 40;

/** `retention.erase`: personal data past its retention date, and idempotency keys past 24 h. */
export async function eraseExpired(deps: MaintenanceDeps): Promise<JobResult<'retention.erase'>> {
  const now = deps.clock.now();
  // Completed lookups carry the sealed record in their result, which BullMQ also copies into the
  // queue's event stream: no ciphertext of a record may outlive the record itself.
  await deps.producer.trimEvents(QUEUES.lookups, new Date(now.getTime() - deps.config.RECORD_RETENTION_DAYS * 24 * 3600 * 1000));
  let erased = 0;
  for (let i = 0; i < ERASE_MAX_BATCHES; i++) {
    const n = await repo.eraseExpiredBatch(deps.db, now, ERASE_BATCH);
    erased += n;
    if (n < ERASE_BATCH) break;
  }
  let idempotencyKeysDeleted = 0;
  const cutoff = new Date(now.getTime() - idem.REPLAY_WINDOW_MS);
  for (let i = 0; i < ERASE_MAX_BATCHES; i++) {
    const n = await repo.deleteIdempotencyKeysBatch(deps.db, cutoff, ERASE_BATCH);
    idempotencyKeysDeleted += n;
    if (n < ERASE_BATCH) break;
  }
  return { erased, idempotencyKeysDeleted };
}
