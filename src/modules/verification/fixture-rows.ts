import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { batcher } from '../../lib/batch.ts';
import { isPool, refusedForItsValues } from '../../lib/db.ts';
import { recordFixtureCalls } from '../wallet/index.ts';
import type { NewVerification } from './verification.repository.ts';

/** A fixture verification, decided on the spot: never holds a unit, completed when created. */
export type FixtureRow = Omit<NewVerification, 'batchId'> & { status: 'found' | 'not_found'; failureCode: string | null; recordEnc: Buffer | null };

const MAX_BATCH = 64;
const writers = new WeakMap<DatabasePool, (row: FixtureRow) => Promise<void>>();

/**
 * Writes a fixture verification and its zero ledger line; resolves once both are committed. On the
 * pool, the calls that arrive while a write is under way are written together by the next statement
 * (lib/batch.ts, as the audit trail's appends are): one COMMIT, one round trip and one wake-up of a
 * backend for all of them, where each call had its own. A statement of several that PostgreSQL
 * refused for its values (one call's consent it cannot store, say) is run again call by call, so
 * that fault is its own caller's; any other failure fails every call of the statement (it may have
 * committed: a retry would meet its own rows). In a transaction (an Idempotency-Key's claim is
 * linked in it) the row is written there, alone.
 */
export async function writeFixture(db: CommonQueryMethods, row: FixtureRow): Promise<void> {
  if (!isPool(db)) {
    await insertFixtures(db, [row]);
    return;
  }
  let writer = writers.get(db);
  if (!writer) writers.set(db, (writer = batcher({ maxBatch: MAX_BATCH, retryOneByOne: refusedForItsValues, run: (rows: FixtureRow[]) => insertFixtures(db, rows) })));
  await writer(row);
}

/**
 * Fixture verifications and their ledger lines in one statement (the wallet module writes the lines;
 * each line's details are built from its own row). Prepared: one text whatever the number of rows.
 * Binary columns that may be empty travel as empty values (a sealed value or a subject hash never
 * is), since an array of bytea cannot carry a NULL here.
 */
async function insertFixtures(db: CommonQueryMethods, rows: readonly FixtureRow[]): Promise<void[]> {
  const text = (f: (r: FixtureRow) => string | null) => sql.array(rows.map(f), 'text');
  const bytes = (f: (r: FixtureRow) => Buffer | null) => sql.array(rows.map((r) => f(r) ?? EMPTY), 'bytea');
  const lines = await recordFixtureCalls(db, {
    statement: 'fixture_verifications',
    records: sql.fragment`
      INSERT INTO verifications
        (reference_id, org_id, user_id, api_client_id, mode, reason, fixture, status, failure_code, holds_unit, consent, query_enc, record_enc, key_id, subject_hash, request_id, created_at, completed_at, expires_at, delivery)
      SELECT i.reference_id, i.org_id::int8, i.user_id::int8, i.api_client_id::int8, i.mode, i.reason, true, i.status, i.failure_code, false, i.consent::jsonb,
             i.query_enc, nullif(i.record_enc, ''::bytea), i.key_id, nullif(i.subject_hash, ''::bytea), i.request_id,
             i.created_at::timestamptz, i.created_at::timestamptz, i.expires_at::timestamptz, i.delivery
      FROM unnest(
        ${text((r) => r.referenceId)}, ${text((r) => String(r.orgId))}, ${text((r) => (r.userId === null ? null : String(r.userId)))},
        ${text((r) => (r.apiClientId === null ? null : String(r.apiClientId)))}, ${text((r) => r.mode)}, ${text((r) => r.reason)},
        ${text((r) => r.status)}, ${text((r) => r.failureCode)}, ${text((r) => (r.consent === null ? null : JSON.stringify(r.consent)))},
        ${bytes((r) => r.queryEnc)}, ${bytes((r) => r.recordEnc)}, ${text((r) => r.keyId)}, ${bytes((r) => r.subjectHash)},
        ${text((r) => r.requestId)}, ${text((r) => r.createdAt.toISOString())}, ${text((r) => r.expiresAt.toISOString())}, ${text((r) => r.delivery ?? 'sync')}
      ) AS i(reference_id, org_id, user_id, api_client_id, mode, reason, status, failure_code, consent, query_enc, record_enc, key_id, subject_hash, request_id, created_at, expires_at, delivery)
      RETURNING reference_id, org_id, jsonb_build_object('outcome', status, 'mode', mode, 'reason', reason) AS details`,
  });
  // One line per row, each naming its row: anything else is our fault, and the batch's callers are told.
  const written = new Set(lines.map((l) => l.reference));
  if (lines.length !== rows.length || rows.some((r) => !written.has(r.referenceId))) throw new Error('fixture: a row and its ledger line were not written together');
  return rows.map(() => undefined);
}

const EMPTY = Buffer.alloc(0);
