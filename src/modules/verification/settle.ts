import type { CommonQueryMethods } from 'slonik';
import { sealJson, type KeyRing, type Sealed } from '../../lib/crypto.ts';
import type { FaceKept } from './face-kept.ts';
import type { MatchOutcome } from './match.ts';
import type { PersonRecord } from './person.ts';
import { keyRing } from './sealing.ts';
import * as repo from './verification.repository.ts';

export type Decision =
  // subjectHash: the subject of the returned record (subject.ts), kept unless the query named one.
  | { kind: 'found'; record: PersonRecord | MatchOutcome | FaceKept; transactionId: string; subjectHash: Buffer | null }
  /** `code`: a vNIN refusal (vnin_used, ...), kept as the row's failure_code so a requery says the same. */
  | { kind: 'not_found'; code?: string }
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
    // The record is sealed with the row's key, which crypto:reencrypt may change while the lookup
    // runs: the statement only stores it if the row's key is still the one used, and otherwise the
    // record is sealed again with the row's new key (a second move is a second round, never a loop
    // without end: re-encryption only ever moves rows to the active key).
    let keyId = s.keyId;
    for (let round = 0; round < 3; round++) {
      // Encryption before the statement: nothing slow while the wallet row is locked.
      const sealing = keyRing(ring, keyId)[0]!;
      const record = sealJson([sealing], d.record, s.referenceId);
      const captured = await repo.settleFoundCapturingUnit(db, {
        referenceId: s.referenceId,
        recordEnc: record.data,
        keyId: sealing.id,
        attempts: s.attempts,
        upstreamTransactionId: d.transactionId,
        subjectHash: d.subjectHash,
      });
      if (captured) return { record };
      const now = await repo.findStatusAndKey(db, s.referenceId);
      if (!now || now.status !== 'pending' || now.key_id === keyId) return null;
      keyId = now.key_id;
    }
    return null;
  }
  const released = await repo.settleReleasingUnit(db, {
    referenceId: s.referenceId,
    status: d.kind,
    failureCode: d.code ?? null,
    failureDetail: d.kind === 'failed' ? d.detail.slice(0, 300) : null,
    attempts: s.attempts,
  });
  return released ? { record: null } : null;
}
