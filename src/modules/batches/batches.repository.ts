import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Consent } from '../verification/index.ts';

// The batch module's own tables: verification_batches, batch_lookups, batch_rows. Verifications and
// the wallet are reached through their modules' doors.

const ts = z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v));
export const BATCH_STATUSES = ['queued', 'running', 'paused', 'completed', 'cancelled'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];
export const OPEN_STATUSES = ['queued', 'running', 'paused'] as const;

export const batchRow = z.object({
  id: z.string(),
  org_id: z.coerce.number(),
  user_id: z.coerce.number().nullable(),
  api_client_id: z.coerce.number().nullable(),
  reason: z.string(),
  status: z.enum(BATCH_STATUSES),
  paused_reason: z.literal('insufficient_units').nullable(),
  total: z.number(),
  invalid: z.number(),
  estimated_units: z.number(),
  request_id: z.string().nullable(),
  created_at: ts,
  finished_at: ts.nullable(),
});
export type BatchRow = z.infer<typeof batchRow>;

const batchColumns = sql.fragment`id, org_id, user_id, api_client_id, reason, status, paused_reason, total, invalid, estimated_units, request_id, created_at, finished_at`;

export type NewBatch = {
  id: string;
  orgId: number;
  userId: number | null;
  apiClientId: number | null;
  reason: string;
  total: number;
  invalid: number;
  estimatedUnits: number;
  requestId: string | null;
  createdAt: Date;
};

export type NewLookup = { idx: number; kind: string; fixture: boolean; reason: string; rowCount: number; queryEnc: Buffer; keyId: string; consent: Consent | null; subjectHash: Buffer | null };
export type NewRow = { rowNo: number; clientRef: string | null; lookupIdx: number | null; invalidReason: string | null };

// Rows go in by chunks of this many: one statement's parameters stay well under PostgreSQL's limits.
const CHUNK = 5000;

/** The batch, its lookups and its rows; the caller runs it in one transaction. */
export async function insertBatch(db: CommonQueryMethods, b: NewBatch, lookups: NewLookup[], rows: NewRow[]): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO verification_batches (id, org_id, user_id, api_client_id, reason, status, total, invalid, estimated_units, request_id, created_at)
    VALUES (${b.id}, ${b.orgId}, ${b.userId}, ${b.apiClientId}, ${b.reason}, 'queued', ${b.total}, ${b.invalid}, ${b.estimatedUnits}, ${b.requestId}, ${sql.timestamp(b.createdAt)})`);
  for (let i = 0; i < lookups.length; i += CHUNK) {
    const part = lookups.slice(i, i + CHUNK);
    await db.query(sql.unsafe`
      INSERT INTO batch_lookups (batch_id, idx, kind, fixture, state, reason, row_count, query_enc, key_id, consent, subject_hash)
      SELECT ${b.id}, idx, kind, fixture, 'waiting', reason, row_count, decode(q, 'base64'), key_id, c::jsonb, decode(h, 'base64')
      FROM unnest(${sql.array(part.map((l) => l.idx), 'int4')}, ${sql.array(part.map((l) => l.kind), 'text')}, ${sql.array(part.map((l) => l.fixture), 'bool')},
                  ${sql.array(part.map((l) => l.reason), 'text')}, ${sql.array(part.map((l) => l.rowCount), 'int4')},
                  ${sql.array(part.map((l) => l.queryEnc.toString('base64')), 'text')}, ${sql.array(part.map((l) => l.keyId), 'text')},
                  ${sql.array(part.map((l) => (l.consent ? JSON.stringify(l.consent) : null)), 'text')},
                  ${sql.array(part.map((l) => l.subjectHash?.toString('base64') ?? null), 'text')})
        AS t(idx, kind, fixture, reason, row_count, q, key_id, c, h)`);
  }
  for (let i = 0; i < rows.length; i += CHUNK) {
    const part = rows.slice(i, i + CHUNK);
    await db.query(sql.unsafe`
      INSERT INTO batch_rows (batch_id, row_no, client_ref, lookup_idx, invalid_reason)
      SELECT ${b.id}, row_no, client_ref, lookup_idx, invalid_reason
      FROM unnest(${sql.array(part.map((r) => r.rowNo), 'int4')}, ${sql.array(part.map((r) => r.clientRef), 'text')},
                  ${sql.array(part.map((r) => r.lookupIdx), 'int4')}, ${sql.array(part.map((r) => r.invalidReason), 'text')})
        AS t(row_no, client_ref, lookup_idx, invalid_reason)`);
  }
}

export async function findBatch(db: CommonQueryMethods, id: string, orgId?: number): Promise<BatchRow | null> {
  const scope = orgId === undefined ? sql.fragment`` : sql.fragment`AND org_id = ${orgId}`;
  return db.maybeOne(sql.type(batchRow)`SELECT ${batchColumns} FROM verification_batches WHERE id = ${id} ${scope}`);
}

/** Locks the batch row for the rest of the caller's transaction: its end and its lookups' ends are serialised. */
export async function lockBatch(db: CommonQueryMethods, id: string): Promise<BatchRow | null> {
  return db.maybeOne(sql.type(batchRow)`SELECT ${batchColumns} FROM verification_batches WHERE id = ${id} FOR UPDATE`);
}

export async function listBatches(db: CommonQueryMethods, orgId: number, limit: number, after?: readonly [string, string]): Promise<readonly (BatchRow & { created_key: string })[]> {
  const cursor = after ? sql.fragment`AND (created_at, id) < (${after[0]}::timestamptz, ${after[1]})` : sql.fragment``;
  return db.any(sql.type(batchRow.extend({ created_key: z.string() }))`
    SELECT ${batchColumns}, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_key
    FROM verification_batches WHERE org_id = ${orgId} ${cursor}
    ORDER BY created_at DESC, id DESC LIMIT ${limit}`);
}

export async function openBatchIds(db: CommonQueryMethods, orgId?: number): Promise<string[]> {
  const scope = orgId === undefined ? sql.fragment`` : sql.fragment`AND org_id = ${orgId}`;
  return [...(await db.anyFirst(sql.type(z.object({ id: z.string() }))`
    SELECT id FROM verification_batches WHERE status IN ('queued', 'running', 'paused') ${scope} ORDER BY created_at LIMIT 1000`))];
}

const tallyRow = z.object({
  found: z.coerce.number(),
  not_found: z.coerce.number(),
  failed: z.coerce.number(),
  cancelled: z.coerce.number(),
  pending: z.coerce.number(),
  queued_lookups: z.coerce.number(),
  waiting_lookups: z.coerce.number(),
  units_charged: z.coerce.number(),
});
export type Tally = z.infer<typeof tallyRow>;

/** Rows per outcome (a lookup counts once per row that asked for it); units: found live lookups. */
export async function tally(db: CommonQueryMethods, batchId: string): Promise<Tally> {
  return db.one(sql.type(tallyRow)`
    SELECT coalesce(sum(row_count) FILTER (WHERE state = 'found'), 0) AS found,
           coalesce(sum(row_count) FILTER (WHERE state = 'not_found'), 0) AS not_found,
           coalesce(sum(row_count) FILTER (WHERE state = 'failed'), 0) AS failed,
           coalesce(sum(row_count) FILTER (WHERE state = 'cancelled'), 0) AS cancelled,
           coalesce(sum(row_count) FILTER (WHERE state IN ('waiting', 'queued')), 0) AS pending,
           count(*) FILTER (WHERE state = 'queued') AS queued_lookups,
           count(*) FILTER (WHERE state = 'waiting') AS waiting_lookups,
           count(*) FILTER (WHERE state = 'found' AND NOT fixture) AS units_charged
    FROM batch_lookups WHERE batch_id = ${batchId}`);
}

const countRow = z.object({ n: z.coerce.number() });

/** Lookups of the batch queued for the authority now (the partial index keeps this cheap at any size). */
export async function countQueued(db: CommonQueryMethods, batchId: string): Promise<number> {
  return db.oneFirst(sql.type(countRow)`SELECT count(*) AS n FROM batch_lookups WHERE batch_id = ${batchId} AND state = 'queued'`);
}

/** Whether any row of the batch has not ended: a lookup still waiting or queued. */
export async function anyPending(db: CommonQueryMethods, batchId: string): Promise<boolean> {
  return db.oneFirst(sql.type(z.object({ p: z.boolean() }))`
    SELECT EXISTS (SELECT 1 FROM batch_lookups WHERE batch_id = ${batchId} AND state = 'waiting')
        OR EXISTS (SELECT 1 FROM batch_lookups WHERE batch_id = ${batchId} AND state = 'queued') AS p`);
}

const consentCol = z.custom<Consent>((v) => typeof v === 'object' && v !== null).nullable();
const waitingRow = z.object({
  idx: z.number(),
  kind: z.enum(['nin', 'vnin', 'phone']),
  reason: z.string(),
  query_enc: z.instanceof(Buffer),
  key_id: z.string(),
  consent: consentCol,
});

export type WaitingLookup = z.infer<typeof waitingRow>;

/** The next lookups to queue, in row order (the verification module tells a fixture value by itself). */
export async function nextWaiting(db: CommonQueryMethods, batchId: string, limit: number): Promise<readonly WaitingLookup[]> {
  return db.any(sql.type(waitingRow)`
    SELECT idx, kind, reason, query_enc, key_id, consent FROM batch_lookups
    WHERE batch_id = ${batchId} AND state = 'waiting' ORDER BY idx LIMIT ${limit}`);
}

export async function queuedLookups(db: CommonQueryMethods, batchId: string) {
  return db.any(sql.type(z.object({ idx: z.number(), kind: z.enum(['nin', 'vnin', 'phone']), reason: z.string(), reference_id: z.string(), org_id: z.coerce.number() }))`
    SELECT l.idx, l.kind, l.reason, l.reference_id, b.org_id FROM batch_lookups l JOIN verification_batches b ON b.id = l.batch_id
    WHERE l.batch_id = ${batchId} AND l.state = 'queued'`);
}

/**
 * A waiting lookup now has its verification: the sealed copy and subject hash here go (the
 * verification has its own). False when the lookup no longer waited (cancelled meanwhile).
 */
export async function markQueued(db: CommonQueryMethods, batchId: string, idx: number, referenceId: string, state: 'queued' | 'found' | 'not_found' | 'failed' = 'queued', failureCode: string | null = null): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE batch_lookups SET state = ${state}, reference_id = ${referenceId}, query_enc = NULL, key_id = NULL, subject_hash = NULL, failure_code = ${failureCode}
    WHERE batch_id = ${batchId} AND idx = ${idx} AND state = 'waiting'`);
  return r.rowCount === 1;
}

/** A queued lookup's verification ended: the lookup takes its outcome (once); a not_found keeps a vNIN refusal's code. */
export async function markEnded(db: CommonQueryMethods, batchId: string, referenceId: string, state: 'found' | 'not_found' | 'failed' | 'cancelled', failureCode: string | null): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE batch_lookups SET state = ${state}, failure_code = ${failureCode}
    WHERE batch_id = ${batchId} AND reference_id = ${referenceId} AND state = 'queued'`);
  return r.rowCount === 1;
}

/** Every lookup not yet queued ends cancelled; its sealed query goes with it. */
export async function cancelWaiting(db: CommonQueryMethods, batchId: string): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE batch_lookups SET state = 'cancelled', query_enc = NULL, key_id = NULL, subject_hash = NULL WHERE batch_id = ${batchId} AND state = 'waiting'`);
}

/** The failure code of a batch lookup cancelled because its subject's data was erased (subject:erase). */
export const SUBJECT_ERASED = 'subject_erased';

const subjectRow = z.object({ org_id: z.coerce.number(), batch_id: z.string(), row: z.number(), batch_status: z.string() });

/** The rows of waiting lookups of one subject, in batch and row order; `batchIds` narrows them to those batches. */
export async function waitingRowsOfSubject(db: CommonQueryMethods, subjectHash: Buffer, o: { orgId?: number | null; batchIds?: readonly string[] } = {}) {
  const org = o.orgId == null ? sql.fragment`` : sql.fragment`AND b.org_id = ${o.orgId}`;
  const batches = o.batchIds ? sql.fragment`AND l.batch_id = ANY(${sql.array([...o.batchIds], 'text')})` : sql.fragment``;
  return db.any(sql.type(subjectRow)`
    SELECT b.org_id, r.batch_id, r.row_no AS row, b.status AS batch_status
    FROM batch_lookups l JOIN batch_rows r ON r.batch_id = l.batch_id AND r.lookup_idx = l.idx JOIN verification_batches b ON b.id = l.batch_id
    WHERE l.subject_hash = ${sql.binary(subjectHash)} AND l.state = 'waiting' ${org} ${batches}
    ORDER BY r.batch_id, r.row_no`);
}

/** The batches with a waiting lookup of the subject, in id order (the order their locks are taken in). */
export async function batchesWaitingOnSubject(db: CommonQueryMethods, subjectHash: Buffer): Promise<readonly string[]> {
  return db.anyFirst(sql.type(z.object({ batch_id: z.string() }))`
    SELECT DISTINCT batch_id FROM batch_lookups WHERE subject_hash = ${sql.binary(subjectHash)} AND state = 'waiting' ORDER BY batch_id`);
}

/** The subject's waiting lookups in these batches end cancelled (`subject_erased`), their sealed query and hash gone. */
export async function cancelWaitingOfSubject(db: CommonQueryMethods, subjectHash: Buffer, batchIds: readonly string[]): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE batch_lookups SET state = 'cancelled', failure_code = ${SUBJECT_ERASED}, query_enc = NULL, key_id = NULL, subject_hash = NULL
    WHERE subject_hash = ${sql.binary(subjectHash)} AND state = 'waiting' AND batch_id = ANY(${sql.array([...batchIds], 'text')})`);
}

const unhashedRow = z.object({ batch_id: z.string(), idx: z.number(), query_enc: z.instanceof(Buffer), key_id: z.string() });

/** Waiting NIN lookups stored before lookups kept their subject hash, by (batch_id, idx) after `after`. */
export async function unhashedWaitingNins(db: CommonQueryMethods, after: readonly [string, number], limit: number) {
  return db.any(sql.type(unhashedRow)`
    SELECT batch_id, idx, query_enc, key_id FROM batch_lookups
    WHERE state = 'waiting' AND kind = 'nin' AND subject_hash IS NULL AND (batch_id, idx) > (${after[0]}, ${after[1]})
    ORDER BY batch_id, idx LIMIT ${limit}`);
}

export async function setSubjectHash(db: CommonQueryMethods, batchId: string, idx: number, subjectHash: Buffer): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE batch_lookups SET subject_hash = ${sql.binary(subjectHash)} WHERE batch_id = ${batchId} AND idx = ${idx} AND state = 'waiting' AND subject_hash IS NULL`);
}

/** Moves an open batch to another status; false when the batch had already ended. */
export async function setStatus(db: CommonQueryMethods, batchId: string, status: BatchStatus, pausedReason: 'insufficient_units' | null = null): Promise<boolean> {
  const finished = status === 'completed' || status === 'cancelled' ? sql.fragment`now()` : sql.fragment`NULL`;
  const r = await db.query(sql.unsafe`
    UPDATE verification_batches SET status = ${status}, paused_reason = ${pausedReason}, finished_at = ${finished}
    WHERE id = ${batchId} AND status IN ('queued', 'running', 'paused') AND (status <> ${status} OR paused_reason IS DISTINCT FROM ${pausedReason})`);
  return r.rowCount === 1;
}

const pageRow = z.object({ row_no: z.number(), client_ref: z.string().nullable(), invalid_reason: z.string().nullable(), state: z.string().nullable(), kind: z.string().nullable(), reference_id: z.string().nullable(), failure_code: z.string().nullable() });
export type ResultRow = z.infer<typeof pageRow>;

/** Rows in order from `afterRow`, each with its lookup's state and reference. */
export async function resultRows(db: CommonQueryMethods, batchId: string, afterRow: number, limit: number): Promise<readonly ResultRow[]> {
  return db.any(sql.type(pageRow)`
    SELECT r.row_no, r.client_ref, r.invalid_reason, l.state, l.kind, l.reference_id, l.failure_code
    FROM batch_rows r LEFT JOIN batch_lookups l ON l.batch_id = r.batch_id AND l.idx = r.lookup_idx
    WHERE r.batch_id = ${batchId} AND r.row_no > ${afterRow}
    ORDER BY r.row_no LIMIT ${limit}`);
}

/**
 * Rows of an organisation's open batches that have not ended and that the pending counter of
 * verifications does not hold: rows still waiting to be queued, and the duplicate rows of a queued
 * lookup (its one verification counts once there).
 */
export async function uncountedPendingRows(db: CommonQueryMethods, orgId: number): Promise<number> {
  return db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`
    SELECT coalesce(sum(CASE WHEN l.state = 'waiting' THEN l.row_count ELSE l.row_count - 1 END), 0) AS n
    FROM verification_batches b JOIN batch_lookups l ON l.batch_id = b.id
    WHERE b.org_id = ${orgId} AND b.status IN ('queued', 'running', 'paused') AND l.state IN ('waiting', 'queued')`);
}

/** Open batches by status and their rows still pending, for /metrics. */
export async function gauges(db: CommonQueryMethods) {
  return db.any(sql.type(z.object({ status: z.string(), batches: z.coerce.number(), pending_rows: z.coerce.number() }))`
    SELECT b.status, count(DISTINCT b.id) AS batches,
           coalesce(sum(l.row_count) FILTER (WHERE l.state IN ('waiting', 'queued')), 0) AS pending_rows
    FROM verification_batches b LEFT JOIN batch_lookups l ON l.batch_id = b.id
    WHERE b.status IN ('queued', 'running', 'paused') GROUP BY b.status`);
}
