import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { captureHeldUnit, debitFaceMatch, holdUnit, releaseHeldUnit, spendableUnits, type DebitFollowUp } from '../wallet/index.ts';
import type { Consent } from './consent.ts';
import { ruleSql } from '../../lib/rule.ts';
import { SERVED } from './served.ts';
import {
  idempotencyRow,
  STATUSES,
  verificationRow,
  type Delivery,
  type Mode,
  type VerificationRow,
  type VerificationStatus,
} from './verification.schemas.ts';

const columns = sql.fragment`
  reference_id, org_id, mode, reason, fixture, status, query_enc, record_enc, key_id, failure_code, consent, created_at, expires_at, delivery`;

export type NewVerification = {
  referenceId: string;
  orgId: number;
  /** Who asked: a user, or (userId null) an API client. */
  userId: number | null;
  apiClientId: number | null;
  mode: Mode;
  reason: string;
  queryEnc: Buffer;
  /** How the person agreed, as the caller stated it (not personal data); null when not stated. */
  consent: Consent | null;
  keyId: string;
  /** HMAC of the NIN asked for (subject.ts); null until a record is found for other modes. */
  subjectHash: Buffer | null;
  requestId: string | null;
  createdAt: Date;
  expiresAt: Date;
  /** Absent: sync. */
  delivery?: Delivery;
  /** A batch's row: its batch and its lookup there (unique together, so the row is written once). */
  batchId?: string | null;
  batchLookup?: number | null;
};

export type DecidedVerification = NewVerification & { fixture: boolean; status: VerificationStatus; holdsUnit: boolean; recordEnc: Buffer | null; failureCode?: string };

const binaryOrNull = (b: Buffer | null) => (b ? sql.binary(b) : null);

/** A verification decided on the spot (a circuit open): no unit is held. */
export async function insertVerification(db: CommonQueryMethods, v: DecidedVerification): Promise<void> {
  await db.query(sql.unsafe`${decidedInsert(v)}`);
}

/**
 * A fixture verification written beside its zero ledger line (the wallet's recordFixtureCalls): the
 * row, returning what its line records (`details`, besides the wallet's own).
 */
export function decidedRecord(v: DecidedVerification, details: Record<string, string | boolean>) {
  return sql.fragment`${decidedInsert(v)} RETURNING reference_id, org_id, ${sql.jsonb(details)} AS details`;
}

const ofBatchLookupRow = z.object({
  reference_id: z.string(),
  status: z.enum(STATUSES),
  failure_code: z.string().nullable(),
  created_at: z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v)),
});

/** The verification of a batch's lookup, if it was written (by a feeder that then died, say). */
export async function findOfBatchLookup(db: CommonQueryMethods, batchId: string, lookupIdx: number) {
  return db.maybeOne(sql.type(ofBatchLookupRow)`
    SELECT reference_id, status, failure_code, created_at FROM verifications WHERE batch_id = ${batchId} AND batch_lookup = ${lookupIdx}`);
}

/** One text for every verification (casts rather than SQL NULLs), so the statement can be prepared. */
function decidedInsert(v: DecidedVerification) {
  const completedAt = sql.fragment`${v.status === 'pending' ? null : v.createdAt.toISOString()}::timestamptz`;
  return sql.fragment`
    INSERT INTO verifications
      (reference_id, org_id, user_id, api_client_id, mode, reason, fixture, status, failure_code, holds_unit, consent, query_enc, record_enc, key_id, subject_hash, request_id, created_at, completed_at, expires_at, delivery, batch_id, batch_lookup)
    VALUES
      (${v.referenceId}, ${v.orgId}, ${v.userId}, ${v.apiClientId}, ${v.mode}, ${v.reason}, ${v.fixture}, ${v.status}, ${v.failureCode ?? null}, ${v.holdsUnit}, ${consentValue(v.consent)},
       ${sql.binary(v.queryEnc)}, ${v.recordEnc ? sql.binary(v.recordEnc) : null}, ${v.keyId}, ${binaryOrNull(v.subjectHash)}, ${v.requestId},
       ${sql.timestamp(v.createdAt)}, ${completedAt}, ${sql.timestamp(v.expiresAt)}, ${v.delivery ?? 'sync'}, ${v.batchId ?? null}, ${v.batchLookup ?? null}::int4)`;
}

/** A consent for a jsonb column (null stays SQL NULL). */
export function consentValue(c: Consent | null) {
  return sql.fragment`${c === null ? null : JSON.stringify(c)}::jsonb`;
}

/**
 * An organisation's verification by reference, as a fragment a hot route reads beside its principal;
 * each argument a value or a column of the caller's statement (the requery's batched read).
 */
export function verificationOfOrgQuery(referenceId: string | FragmentSqlToken, orgId: number | null | FragmentSqlToken) {
  return sql.fragment`SELECT ${columns} FROM verifications WHERE reference_id = ${referenceId} AND org_id = ${orgId}`;
}

/**
 * True (never NULL), over a row verificationOfOrgQuery read (as `r`), exactly where a requery answers
 * it with its record at `now` (answer.ts): the rule SERVED (served.ts), compiled to SQL. The
 * requery's read records its audit event where this holds (auth/along.ts).
 */
export function servedByRequery(keyIds: readonly string[]) {
  const ids = sql.array([...keyIds], 'text');
  return (now: FragmentSqlToken) =>
    ruleSql(SERVED, { status: sql.fragment`r.status`, record_enc: sql.fragment`r.record_enc`, key_id: sql.fragment`r.key_id`, expires_at: sql.fragment`r.expires_at`, now, key_ids: sql.fragment`${ids}` });
}

/** The columns verificationOfOrgQuery returned (all null when it found nothing). */
export function verificationOf(row: Record<string, unknown>): VerificationRow | null {
  if (row.reference_id === null || row.reference_id === undefined) return null;
  // A row the schema does not know is our fault (a 500), never the caller's (a ZodError would be a 4xx).
  const parsed = verificationRow.safeParse(row);
  if (!parsed.success) throw new Error('verification row does not match its schema');
  return parsed.data;
}

/** With orgId, another organisation's reference reads as unknown. */
export async function findVerification(db: CommonQueryMethods, referenceId: string, orgId?: number) {
  if (orgId !== undefined) return db.maybeOne(sql.prepared('verification_of_org', verificationRow)`${verificationOfOrgQuery(referenceId, orgId)}`);
  const scope = orgId === undefined ? sql.fragment`` : sql.fragment`AND org_id = ${orgId}`;
  return db.maybeOne(sql.type(verificationRow)`SELECT ${columns} FROM verifications WHERE reference_id = ${referenceId} ${scope}`);
}

/** An organisation's face verifications among these references (a verification link's submissions). */
export async function faceVerificationsOf(db: CommonQueryMethods, orgId: number, refs: readonly string[]) {
  return db.any(sql.type(verificationRow)`
    SELECT ${columns} FROM verifications WHERE org_id = ${orgId} AND reference_id = ANY(${sql.array([...refs], 'text')}) AND mode = 'face'`);
}

// A live verification's unit is held, captured and released by the wallet module, each in the one
// statement that also changes the verification row: the fragments below are the verification's part.

/**
 * Records a live verification as pending and holds one unit for it, in one statement: no hold
 * without its row, no row without its hold. False when no unit is spendable (nothing is written).
 */
export async function insertPendingHoldingUnit(db: CommonQueryMethods, v: NewVerification): Promise<boolean> {
  return holdUnit(db, v.orgId, sql.fragment`
    INSERT INTO verifications
      (reference_id, org_id, user_id, api_client_id, mode, reason, fixture, status, holds_unit, consent, query_enc, key_id, subject_hash, request_id, created_at, expires_at, delivery, batch_id, batch_lookup)
    SELECT ${v.referenceId}, hold.org_id, ${v.userId}, ${v.apiClientId}, ${v.mode}, ${v.reason}, false, 'pending', true, ${consentValue(v.consent)},
           ${sql.binary(v.queryEnc)}, ${v.keyId}, ${binaryOrNull(v.subjectHash)}, ${v.requestId}, ${sql.timestamp(v.createdAt)}, ${sql.timestamp(v.expiresAt)},
           ${v.delivery ?? 'sync'}, ${v.batchId ?? null}, ${v.batchLookup ?? null}::int4
    FROM hold`);
}

/**
 * The units the organisation could still hold, once each of `letIn` (live lookups let in by admission)
 * that has no row yet is counted as holding one: its hold, which writes its row, is on its way.
 */
export async function spendableAfterLetIn(db: CommonQueryMethods, orgId: number, letIn: readonly string[]): Promise<number> {
  const promised =
    letIn.length === 0 ? sql.fragment`0` : sql.fragment`SELECT ${letIn.length} - count(*) FROM verifications WHERE reference_id = ANY(${sql.array([...letIn], 'text')})`;
  return spendableUnits(db, orgId, promised);
}

/**
 * Decides a pending verification as found and turns its held unit into exactly one debit with its
 * ledger line, in one statement. The `status = 'pending'` guard makes this the single point where a
 * verification is decided: a job run twice, the sweep and a stalled worker race here, the row lock
 * orders them, and only the first gets a row back (the unique index on the ledger backs it). That
 * one gets what the debit must be followed by; the others null.
 */
export async function settleFoundCapturingUnit(
  db: CommonQueryMethods,
  s: { referenceId: string; recordEnc: Buffer; keyId: string; attempts: number; upstreamTransactionId: string; subjectHash: Buffer | null },
): Promise<DebitFollowUp | null> {
  return captureHeldUnit(db, {
    reference: s.referenceId,
    decide: sql.fragment`
      UPDATE verifications
      SET status = 'found', record_enc = ${sql.binary(s.recordEnc)}, failure_code = NULL, failure_detail = NULL,
          subject_hash = coalesce(subject_hash, ${binaryOrNull(s.subjectHash)}),
          attempts = attempts + ${s.attempts}, holds_unit = false, completed_at = now()
      WHERE reference_id = ${s.referenceId} AND status = 'pending' AND key_id = ${s.keyId}
      RETURNING org_id, jsonb_build_object('mode', mode, 'reason', reason, 'transaction_id', ${s.upstreamTransactionId}::text) AS details`,
  });
}

/**
 * A found face verification's comparison (the kept value, sealed) with the debit of the `units` (> 0)
 * a comparison costs beyond the lookup's: both in one statement or neither (wallet/holds.ts). False
 * when the wallet could not pay or the step was done.
 */
export async function settleFaceOutcome(db: CommonQueryMethods, s: { referenceId: string; orgId: number; recordEnc: Buffer; keyId: string; units: number }): Promise<boolean> {
  const where = sql.fragment`reference_id = ${s.referenceId} AND org_id = ${s.orgId} AND status = 'found' AND mode = 'face' AND key_id = ${s.keyId}`;
  return debitFaceMatch(db, {
    orgId: s.orgId,
    units: s.units,
    reference: s.referenceId,
    eligible: sql.fragment`SELECT 1 FROM verifications WHERE ${where}`,
    decide: sql.fragment`
      UPDATE verifications SET record_enc = ${sql.binary(s.recordEnc)}
      WHERE ${where} AND EXISTS (SELECT 1 FROM paid)
      RETURNING jsonb_build_object('mode', mode, 'reason', reason, 'face', true) AS details`,
  });
}

/** The status and key of a verification, to tell a decided one from one re-sealed under another key meanwhile. */
export async function findStatusAndKey(db: CommonQueryMethods, referenceId: string) {
  return db.maybeOne(sql.type(z.object({ status: z.string(), key_id: z.string().nullable() }))`
    SELECT status, key_id FROM verifications WHERE reference_id = ${referenceId}`);
}

/** Decides a pending verification as not found or failed and gives its held unit back, in one statement. */
export async function settleReleasingUnit(
  db: CommonQueryMethods,
  s: { referenceId: string; status: 'not_found' | 'failed'; failureCode: string | null; failureDetail: string | null; attempts: number },
): Promise<boolean> {
  return releaseHeldUnit(db, sql.fragment`
    UPDATE verifications
    SET status = ${s.status}, failure_code = ${s.failureCode}, failure_detail = ${s.failureDetail},
        attempts = attempts + ${s.attempts}, holds_unit = false, completed_at = now()
    WHERE reference_id = ${s.referenceId} AND status = 'pending'
    RETURNING org_id`);
}

/** A background lookup's failed try, recorded while it stays pending (the status is untouched). */
export async function countAttempts(db: CommonQueryMethods, referenceId: string, attempts: number): Promise<void> {
  if (attempts > 0) await db.query(sql.unsafe`UPDATE verifications SET attempts = attempts + ${attempts} WHERE reference_id = ${referenceId} AND status = 'pending'`);
}

const staleRow = z.object({ reference_id: z.string(), org_id: z.coerce.number(), mode: z.string(), created_at: z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v)) });

/** Synchronous rows only: asynchronous and batch rows wait out outages (see findWaitingBackground). */
export async function findStalePending(db: CommonQueryMethods, olderThan: Date, limit: number) {
  return db.any(sql.type(staleRow)`
    SELECT reference_id, org_id, mode, created_at FROM verifications
    WHERE status = 'pending' AND delivery = 'sync' AND created_at < ${sql.timestamp(olderThan)}
    ORDER BY created_at LIMIT ${limit}`);
}

const waitingRow = staleRow.extend({ delivery: z.enum(['async', 'batch']), batch_id: z.string().nullable(), created_key: z.string() });

/**
 * Asynchronous and batch rows queued for the authority (they hold their unit), oldest first, after
 * the keyset position `after` (created_at to the microsecond, reference).
 */
export async function findWaitingBackground(db: CommonQueryMethods, o: { acceptedBefore: Date; after: readonly [string, string] | null; limit: number }) {
  const after = o.after ? sql.fragment`AND (created_at, reference_id) > (${o.after[0]}::timestamptz, ${o.after[1]})` : sql.fragment``;
  return db.any(sql.type(waitingRow)`
    SELECT reference_id, org_id, mode, created_at, delivery, batch_id,
           to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_key
    FROM verifications
    WHERE status = 'pending' AND delivery <> 'sync' AND holds_unit AND created_at < ${sql.timestamp(o.acceptedBefore)} ${after}
    ORDER BY created_at, reference_id LIMIT ${o.limit}`);
}

const countRow = z.object({ n: z.coerce.number() });

/** One bounded batch; SKIP LOCKED leaves rows being settled right now to the next run. */
export async function eraseExpiredBatch(db: CommonQueryMethods, now: Date, limit: number): Promise<number> {
  return db.oneFirst(sql.type(countRow)`
    WITH doomed AS (
      SELECT reference_id FROM verifications
      WHERE (record_enc IS NOT NULL OR query_enc IS NOT NULL) AND expires_at <= ${sql.timestamp(now)} AND status <> 'pending'
      ORDER BY expires_at LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), erased AS (
      UPDATE verifications v SET record_enc = NULL, query_enc = NULL, status = 'expired'
      FROM doomed WHERE v.reference_id = doomed.reference_id
      RETURNING 1
    )
    SELECT count(*) AS n FROM erased`);
}

export async function deleteIdempotencyKeysBatch(db: CommonQueryMethods, olderThan: Date, limit: number): Promise<number> {
  return db.oneFirst(sql.type(countRow)`
    WITH doomed AS (
      SELECT org_id, key FROM idempotency_keys WHERE created_at < ${sql.timestamp(olderThan)} LIMIT ${limit}
    ), deleted AS (
      DELETE FROM idempotency_keys k USING doomed WHERE k.org_id = doomed.org_id AND k.key = doomed.key RETURNING 1
    )
    SELECT count(*) AS n FROM deleted`);
}

// Idempotency keys ---------------------------------------------------------------------------

/**
 * Claims a key: a new row, or a row that may be taken over (older than the replay window, or a
 * claim that never reached its verification and was abandoned). Nothing back: someone holds it.
 */
export async function claimIdempotencyKey(
  db: CommonQueryMethods,
  c: { orgId: number; key: string; endpoint: string; requestHash: string; keyId: string; now: Date; expiredBefore: Date; abandonedBefore: Date },
): Promise<boolean> {
  const row = await db.maybeOne(sql.type(z.object({ claimed: z.boolean() }))`
    INSERT INTO idempotency_keys (org_id, key, endpoint, request_hash, key_id, hash_key_id, created_at)
    VALUES (${c.orgId}, ${c.key}, ${c.endpoint}, ${c.requestHash}, ${c.keyId}, ${c.keyId}, ${sql.timestamp(c.now)})
    ON CONFLICT (org_id, key) DO UPDATE
      SET endpoint = EXCLUDED.endpoint, request_hash = EXCLUDED.request_hash, key_id = EXCLUDED.key_id, hash_key_id = EXCLUDED.hash_key_id,
          created_at = EXCLUDED.created_at, reference_id = NULL, status_code = NULL, response_enc = NULL
      WHERE idempotency_keys.created_at < ${sql.timestamp(c.expiredBefore)}
         OR (idempotency_keys.status_code IS NULL AND idempotency_keys.reference_id IS NULL
             AND idempotency_keys.created_at < ${sql.timestamp(c.abandonedBefore)})
    RETURNING true AS claimed`);
  return row !== null;
}

export async function findIdempotencyKey(db: CommonQueryMethods, orgId: number, key: string) {
  return db.maybeOne(sql.type(idempotencyRow)`
    SELECT endpoint, request_hash, reference_id, status_code, response_enc, key_id, hash_key_id, created_at
    FROM idempotency_keys WHERE org_id = ${orgId} AND key = ${key}`);
}

/**
 * Ties a claim to the verification it started, in the transaction that creates the verification.
 * Only one request can do this per claim, so two requests racing on one key never both charge.
 */
export async function linkIdempotencyKey(db: CommonQueryMethods, l: { orgId: number; key: string; requestHash: string; referenceId: string }): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE idempotency_keys SET reference_id = ${l.referenceId}
    WHERE org_id = ${l.orgId} AND key = ${l.key} AND request_hash = ${l.requestHash} AND reference_id IS NULL AND status_code IS NULL`);
  return r.rowCount === 1;
}

export async function storeIdempotentResponse(
  db: CommonQueryMethods,
  s: { orgId: number; key: string; requestHash: string; statusCode: number; responseEnc: Buffer; keyId: string },
): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE idempotency_keys SET status_code = ${s.statusCode}, response_enc = ${sql.binary(s.responseEnc)}, key_id = ${s.keyId},
      hash_key_id = coalesce(hash_key_id, key_id)
    WHERE org_id = ${s.orgId} AND key = ${s.key} AND request_hash = ${s.requestHash} AND status_code IS NULL`);
}

export async function releaseIdempotencyKey(
  db: CommonQueryMethods,
  r: { orgId: number; key: string; requestHash: string; unlinkedOnly: boolean },
): Promise<void> {
  const linked = r.unlinkedOnly ? sql.fragment`AND reference_id IS NULL` : sql.fragment``;
  await db.query(sql.unsafe`
    DELETE FROM idempotency_keys
    WHERE org_id = ${r.orgId} AND key = ${r.key} AND request_hash = ${r.requestHash} AND status_code IS NULL ${linked}`);
}
