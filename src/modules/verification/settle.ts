import type { CommonQueryMethods } from 'slonik';
import { sealJson, type KeyRing, type Sealed } from '../../lib/crypto.ts';
import type { PersonRecord } from './person.ts';
import { keyRing } from './sealing.ts';
import * as repo from './verification.repository.ts';

export type Decision =
  | { kind: 'found'; record: PersonRecord }
  | { kind: 'not_found' }
  | { kind: 'failed'; code: string; detail: string };

/**
 * The one way a pending verification is decided, by its lookup job, by the API when the job could
 * not be queued, or by the sweep: the guarded status change and the wallet move (capture the held
 * unit when found, release it otherwise) in one statement. Null when the verification was already
 * decided; otherwise what was stored, with the sealed record when found.
 */
export async function settle(
  db: CommonQueryMethods,
  ring: KeyRing,
  s: { referenceId: string; keyId: string | null; decision: Decision; attempts: number },
): Promise<{ record: Sealed | null } | null> {
  const d = s.decision;
  if (d.kind === 'found') {
    // Encryption before the statement: nothing slow while the wallet row is locked.
    const record = sealJson(keyRing(ring, s.keyId), d.record, s.referenceId);
    const captured = await repo.settleFoundCapturingUnit(db, {
      referenceId: s.referenceId,
      recordEnc: record.data,
      attempts: s.attempts,
      upstreamTransactionId: d.record.transaction_id,
    });
    return captured ? { record } : null;
  }
  const released = await repo.settleReleasingUnit(db, {
    referenceId: s.referenceId,
    status: d.kind,
    failureCode: d.kind === 'failed' ? d.code : null,
    failureDetail: d.kind === 'failed' ? d.detail.slice(0, 300) : null,
    attempts: s.attempts,
  });
  return released ? { record: null } : null;
}
