import { sql, type CommonQueryMethods, type DatabasePool, type FragmentSqlToken } from 'slonik';
import { batcher } from '../../lib/batch.ts';
import { isPool, refusedForItsValues } from '../../lib/db.ts';
import { recordFixtureCalls } from '../wallet/index.ts';
import type { NewVerification } from './verification.repository.ts';

/** A fixture verification, decided on the spot: never holds a unit, completed when created. */
export type FixtureRow = Omit<NewVerification, 'batchId'> & { status: 'found' | 'not_found'; failureCode: string | null; recordEnc: Buffer | null };

const MAX_BATCH = 64;
/**
 * A sealed record larger than this (one with a photo: a face match's, about 80 KB) is written in a
 * statement of its own, its bytes sent as binary. In a shared statement it would travel in a bytea
 * array, which the driver sends as hex text: twice its size, and PostgreSQL spends milliseconds
 * decoding it (measured: 4 ms a row of 85 KB against under 1 ms as a binary value) while every call
 * batched with it waits for that statement.
 */
const WRITTEN_ALONE_ABOVE_BYTES = 8 * 1024;
const writers = new WeakMap<DatabasePool, (row: FixtureRow) => Promise<void>>();

/**
 * Writes a fixture verification and its zero ledger line; resolves once both are committed. On the
 * pool, the calls that arrive while a write is under way are written together by the next statement
 * (lib/batch.ts, as the audit trail's appends are): one COMMIT, one round trip and one wake-up of a
 * backend for all of them, where each call had its own. A statement of several that PostgreSQL
 * refused for its values (one call's consent it cannot store, say) is run again call by call, so
 * that fault is its own caller's; any other failure fails every call of the statement (it may have
 * committed: a retry would meet its own rows). In a transaction (an Idempotency-Key's claim is
 * linked in it) the row is written there, alone; so is a large record (WRITTEN_ALONE_ABOVE_BYTES).
 */
export async function writeFixture(db: CommonQueryMethods, row: FixtureRow): Promise<void> {
  if (!isPool(db) || (row.recordEnc?.length ?? 0) > WRITTEN_ALONE_ABOVE_BYTES) {
    await insertFixtures(db, [row]);
    return;
  }
  let writer = writers.get(db);
  if (!writer) writers.set(db, (writer = batcher({ maxBatch: MAX_BATCH, retryOneByOne: refusedForItsValues, run: (rows: FixtureRow[]) => insertFixtures(db, rows) })));
  await writer(row);
}

/**
 * The columns a fixture row is written with, once: both statements below are made from this list.
 * Binary columns that may be empty travel as empty values (a sealed value or a subject hash never
 * is), since an array of bytea cannot carry a NULL here.
 */
const COLUMNS: readonly ({ name: string } & ({ type: 'text'; of: (r: FixtureRow) => string | null } | { type: 'bytea'; of: (r: FixtureRow) => Buffer | null }))[] = [
  { name: 'reference_id', type: 'text', of: (r) => r.referenceId },
  { name: 'org_id', type: 'text', of: (r) => String(r.orgId) },
  { name: 'user_id', type: 'text', of: (r) => (r.userId === null ? null : String(r.userId)) },
  { name: 'api_client_id', type: 'text', of: (r) => (r.apiClientId === null ? null : String(r.apiClientId)) },
  { name: 'mode', type: 'text', of: (r) => r.mode },
  { name: 'reason', type: 'text', of: (r) => r.reason },
  { name: 'status', type: 'text', of: (r) => r.status },
  { name: 'failure_code', type: 'text', of: (r) => r.failureCode },
  { name: 'consent', type: 'text', of: (r) => (r.consent === null ? null : JSON.stringify(r.consent)) },
  { name: 'query_enc', type: 'bytea', of: (r) => r.queryEnc },
  { name: 'record_enc', type: 'bytea', of: (r) => r.recordEnc },
  { name: 'key_id', type: 'text', of: (r) => r.keyId },
  { name: 'subject_hash', type: 'bytea', of: (r) => r.subjectHash },
  { name: 'request_id', type: 'text', of: (r) => r.requestId },
  { name: 'created_at', type: 'text', of: (r) => r.createdAt.toISOString() },
  { name: 'expires_at', type: 'text', of: (r) => r.expiresAt.toISOString() },
  { name: 'delivery', type: 'text', of: (r) => r.delivery ?? 'sync' },
];
const list = (parts: Parameters<typeof sql.join>[0]) => sql.join(parts, sql.fragment`, `);

/**
 * The rows as a table `i` of COLUMNS: several as arrays (unnest), one as a row of values, its
 * binary columns sent as binary. Either is one text whatever the values, so each is prepared.
 */
function rowsOf(rows: readonly FixtureRow[]): { statement: string; source: FragmentSqlToken } {
  const names = list(COLUMNS.map((c) => sql.identifier([c.name])));
  if (rows.length === 1) {
    const r = rows[0]!;
    const values = COLUMNS.map((c) => (c.type === 'text' ? sql.fragment`${c.of(r)}::text` : sql.fragment`${sql.binary(c.of(r) ?? EMPTY)}::bytea`));
    return { statement: 'fixture_verification_alone', source: sql.fragment`(VALUES (${list(values)})) AS i(${names})` };
  }
  const arrays = COLUMNS.map((c) => (c.type === 'text' ? sql.array(rows.map(c.of), 'text') : sql.array(rows.map((r) => c.of(r) ?? EMPTY), 'bytea')));
  return { statement: 'fixture_verifications', source: sql.fragment`unnest(${list(arrays)}) AS i(${names})` };
}

/**
 * Fixture verifications and their ledger lines in one statement (the wallet module writes the lines;
 * each line's details are built from its own row).
 */
async function insertFixtures(db: CommonQueryMethods, rows: readonly FixtureRow[]): Promise<void[]> {
  const { statement, source } = rowsOf(rows);
  const lines = await recordFixtureCalls(db, {
    statement,
    records: sql.fragment`
      INSERT INTO verifications
        (reference_id, org_id, user_id, api_client_id, mode, reason, fixture, status, failure_code, holds_unit, consent, query_enc, record_enc, key_id, subject_hash, request_id, created_at, completed_at, expires_at, delivery)
      SELECT i.reference_id, i.org_id::int8, i.user_id::int8, i.api_client_id::int8, i.mode, i.reason, true, i.status, i.failure_code, false, i.consent::jsonb,
             i.query_enc, nullif(i.record_enc, ''::bytea), i.key_id, nullif(i.subject_hash, ''::bytea), i.request_id,
             i.created_at::timestamptz, i.created_at::timestamptz, i.expires_at::timestamptz, i.delivery
      FROM ${source}
      RETURNING reference_id, org_id, jsonb_build_object('outcome', status, 'mode', mode, 'reason', reason) AS details`,
  });
  // One line per row, each naming its row: anything else is our fault, and the batch's callers are told.
  const written = new Set(lines.map((l) => l.reference));
  if (lines.length !== rows.length || rows.some((r) => !written.has(r.referenceId))) throw new Error('fixture: a row and its ledger line were not written together');
  return rows.map(() => undefined);
}

const EMPTY = Buffer.alloc(0);
