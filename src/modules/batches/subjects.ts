import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import type { Config } from '../../config.ts';
import { openJson } from '../../lib/crypto.ts';
import { subjectHash, type WaitingBatchRow, type WaitingQueries } from '../verification/index.ts';
import * as repo from './batches.repository.ts';
import { completeIfDone, lockKey } from './feeder.ts';
import { lookupAad } from './waiting.ts';

// A person's rows in batches not yet queued, for the data-subject commands (subject:export lists
// them, subject:erase cancels them). A waiting NIN lookup keeps the subject hash of its NIN, as a
// verification does; phone and vNIN rows name their person only once the authority has answered.

const rowOf = (r: { org_id: number; batch_id: string; row: number; batch_status: string }): WaitingBatchRow => ({ ...r, state: 'waiting' });

const PAGE = 1000;

/**
 * Lookups that waited before batch lookups kept a subject hash get theirs now, from their sealed NIN
 * (the key is the service's, so no migration could). Once done, the query finds none.
 */
async function hashUnhashed(db: CommonQueryMethods, config: Config): Promise<void> {
  let after: readonly [string, number] = ['', -1];
  for (;;) {
    const page = await repo.unhashedWaitingNins(db, after, PAGE);
    for (const l of page) {
      const nin = openJson<string>(config.encryptionKeys.filter((k) => k.id === l.key_id), { keyId: l.key_id, data: l.query_enc }, lookupAad(l.batch_id, l.idx));
      await repo.setSubjectHash(db, l.batch_id, l.idx, subjectHash(config.SUBJECT_HASH_KEY, nin));
    }
    const last = page.at(-1);
    if (!last || page.length < PAGE) return;
    after = [last.batch_id, last.idx];
  }
}

export function waitingBatchRows(config: Config): WaitingQueries {
  return {
    // Outside the erasure's transaction: its row updates must not be held while it waits for a
    // feed's lock (that feed may be about to update the same rows).
    prepare: (db) => hashUnhashed(db, config),
    async list(db, subject, orgId) {
      return (await repo.waitingRowsOfSubject(db, subject, { orgId })).map(rowOf);
    },
    async cancel(tx: DatabaseTransactionConnection, subject) {
      const batchIds = await repo.batchesWaitingOnSubject(tx, subject);
      if (batchIds.length === 0) return [];
      // The lock a feed holds while it queues a batch's lookups (and a cancel takes), in id order:
      // a feed under way finishes first (the rows it queued are pending verifications now, which the
      // erasure sees), and no feed of these batches starts until this transaction ends.
      for (const id of batchIds) await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(${lockKey(id)})`);
      const rows = (await repo.waitingRowsOfSubject(tx, subject, { batchIds })).map(rowOf);
      await repo.cancelWaitingOfSubject(tx, subject, batchIds);
      // A batch whose last waiting rows these were has ended.
      for (const id of batchIds) await completeIfDone(tx, id);
      return rows;
    },
  };
}
