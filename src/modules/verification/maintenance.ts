import type { DatabasePool } from 'slonik';
import type { Config } from '../../config.ts';
import { jobIds, QUEUES, type JobResult } from '../../jobs/catalog.ts';
import type { Producer } from '../../jobs/producer.ts';
import type { Clock } from '../../lib/clock.ts';
import { describe } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import * as idem from './idempotency.ts';
import { settle } from './settle.ts';
import * as repo from './verification.repository.ts';

/** What the scheduled verification jobs need; WorkerDeps provides it. */
export type MaintenanceDeps = { db: DatabasePool; config: Config; clock: Clock; producer: Producer };

// A pending row younger than this still belongs to its API request and its job (the request waits
// VERIFY_WAIT_MS; the job's own retries fit well inside), so the sweep never touches it.
const SWEEP_MIN_AGE_FACTOR = 4;
// Past this, the lookup is given up: the unit goes back and the requery answers "failed".
const SWEEP_GIVE_UP_MS = 3600 * 1000;
const SWEEP_BATCH = 100;

/**
 * `verification.sweep`: pending rows whose job was lost (Redis flushed, failed past its attempts)
 * are queued again under the same job id; rows pending for over an hour are failed and released.
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
    if (row.created_at.getTime() < now - SWEEP_GIVE_UP_MS) {
      const decision = { kind: 'failed' as const, code: 'lookup_abandoned', detail: 'no outcome within one hour' };
      if (await settle(deps.db, deps.config.encryptionKeys, { referenceId: ref, keyId: null, decision, attempts: 0 })) released++;
      continue;
    }
    const jobId = jobIds.lookup(ref);
    const job = await queue.getJob(jobId);
    const state = job ? await job.getState() : 'missing';
    if (state !== 'missing' && state !== 'failed' && state !== 'completed' && state !== 'unknown') continue;
    try {
      if (job) await job.remove();
      // Overdue already: the front of the queue (every lookup job carries a priority; see fair-share.ts).
      await deps.producer.enqueue('verification.lookup', { referenceId: ref, orgId: row.org_id }, { jobId, priority: 1 });
      requeued++;
    } catch (err) {
      log.warn({ err: describe(err), referenceId: ref }, 'lookup not re-queued; next sweep retries');
    }
  }
  if (requeued > 0 || released > 0) log.info({ requeued, released }, 'verification sweep');
  return { requeued, released };
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
