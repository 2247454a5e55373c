import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { sealJson, type KeyRing, type Sealed } from '../../lib/crypto.ts';
import { isPool } from '../../lib/db.ts';
import { FOLLOW_UP_BOTH, type DebitFollowUp } from '../wallet/index.ts';
import { recordWebhookEvent } from '../webhooks/index.ts';
import type { FaceKept } from './face-kept.ts';
import type { MatchOutcome } from './match.ts';
import type { PersonRecord } from './person.ts';
import { keyRing } from './sealing.ts';
import * as repo from './verification.repository.ts';
import { verdictOfVerification } from './verdict.ts';

export type Decision =
  // subjectHash: the subject of the returned record (subject.ts), kept unless the query named one.
  | { kind: 'found'; record: PersonRecord | MatchOutcome | FaceKept; transactionId: string; subjectHash: Buffer | null }
  /** `code`: a vNIN refusal (vnin_used, ...), kept as the row's failure_code so a requery says the same. */
  | { kind: 'not_found'; code?: string }
  | { kind: 'failed'; code: string; detail: string };

/**
 * What a settlement stored: the sealed record when found, and then also what its debit must be
 * followed by (a low-balance alert, an automatic top-up charge: wallet/holds.ts).
 */
export type Settled = { record: null } | { record: Sealed; followUp: DebitFollowUp };

/**
 * The one way a pending verification is decided, by its lookup job, by the API when the job could
 * not be queued, or by the sweep: the guarded status change and the wallet move (capture the held
 * unit when found, release it otherwise) in one statement. Null when the verification was already
 * decided; otherwise what was stored.
 */
export async function settle(
  db: CommonQueryMethods,
  ring: KeyRing,
  s: { referenceId: string; keyId: string | null; decision: Decision; attempts: number; report?: boolean; alsoInTransaction?: AlsoInTransaction },
): Promise<Settled | null> {
  if ((s.report || s.alsoInTransaction) && isPool(db)) return settleReporting(db, ring, s);
  return settleOnly(db, ring, s);
}

/** A step of the settlement's own transaction, after the decision (an asynchronous face match stores its comparison). */
export type AlsoInTransaction = (tx: CommonQueryMethods, stored: { keyId: string; orgId: number }) => Promise<void>;

class NotSettled extends Error {}

/**
 * `verification.completed` for an asynchronous verification, written in the transaction that decides
 * it: a live one's settlement (below), a fixture's own write (fixture-run.ts: decided at once).
 */
export async function reportCompleted(
  tx: CommonQueryMethods,
  // kept: what a found verification keeps (its record, a match-only comparison, a face match's result), for its verdict.
  v: { orgId: number; referenceId: string; kind: string; outcome: Decision['kind']; code?: string | undefined; kept?: unknown },
): Promise<void> {
  // A vNIN the authority refused (used, expired, not issued for this enterprise) keeps its code.
  const status = v.outcome === 'not_found' && v.code ? 'refused' : v.outcome;
  const code = v.outcome === 'found' ? undefined : v.code;
  const verdict = verdictOfVerification({ status: v.outcome, failure_code: code ?? null, mode: v.kind }, v.outcome === 'found' ? v.kept : null);
  await recordWebhookEvent(tx, { orgId: v.orgId, type: 'verification.completed', data: { reference_id: v.referenceId, kind: v.kind, status, ...(code ? { code } : {}), ...verdict } });
}

const pendingRow = z.object({ org_id: z.coerce.number(), mode: z.string(), delivery: z.string() });

/**
 * An asynchronous verification's end is reported to the organisation's webhook endpoints
 * (`verification.completed`) in the transaction that decides it, so the event exists exactly when the
 * decision does. The row is locked first and the event written before the settlement statement, which
 * locks the wallet row last: the wallet waits only for COMMIT, as in a single statement plus one round trip.
 */
async function settleReporting(
  pool: DatabasePool,
  ring: KeyRing,
  s: { referenceId: string; keyId: string | null; decision: Decision; attempts: number; report?: boolean; alsoInTransaction?: AlsoInTransaction },
): Promise<Settled | null> {
  try {
    return await pool.transaction(async (tx) => {
      const row = await tx.maybeOne(sql.type(pendingRow)`
        SELECT org_id, mode, delivery FROM verifications WHERE reference_id = ${s.referenceId} AND status = 'pending' FOR UPDATE`);
      if (!row) return null;
      if (s.report && row.delivery === 'async') {
        const d = s.decision;
        await reportCompleted(tx, { orgId: row.org_id, referenceId: s.referenceId, kind: row.mode, outcome: d.kind, code: d.kind === 'found' ? undefined : d.code, kept: d.kind === 'found' ? d.record : null });
      }
      const settled = await settleOnly(tx, ring, s);
      // Nothing decided: the event must not outlive this transaction.
      if (!settled) throw new NotSettled();
      if (s.alsoInTransaction && settled.record) {
        await s.alsoInTransaction(tx, { keyId: settled.record.keyId, orgId: row.org_id });
        // That step may debit more (a face match's units) after the capture's statement looked.
        return { record: settled.record, followUp: FOLLOW_UP_BOTH };
      }
      return settled;
    });
  } catch (err) {
    if (err instanceof NotSettled) return null;
    throw err;
  }
}

async function settleOnly(
  db: CommonQueryMethods,
  ring: KeyRing,
  s: { referenceId: string; keyId: string | null; decision: Decision; attempts: number },
): Promise<Settled | null> {
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
      if (captured) return { record, followUp: captured };
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
