import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import type { TimeRange } from '../../lib/pagination.ts';
import { csvInstant, csvLine, csvName, csvText, streamCsvLines } from '../../lib/csv-sql.ts';
import { ledgerDescriptionSql } from './line-description.ts';
import { LEDGER_CSV_COLUMNS, ledgerRow, type LedgerCsvColumn, type LedgerKind, type LedgerRow } from './ledger.schemas.ts';

// Reads of an organisation's ledger. Newest first by id: ids only grow, so "id below the cursor" is
// a stable page boundary whatever is appended meanwhile, and (org_id, id) is already indexed.

export type LedgerFilter = { orgId: number; kind?: LedgerKind; range: TimeRange };

const description = ledgerDescriptionSql();

const columns = sql.fragment`
  t.id, t.kind, ${description} AS description, t.amount, t.vat_amount, t.service_charge, t.units_delta, t.units_before, t.units_after, t.reference, t.details,
  t.created_at, u.username, c.client_id, c.name AS client_name`;

// Who made a line: the verification's or the top-up's user or API client, found through the
// reference (each is a primary key); adjustments are the operator's and name nobody.
const withActor = sql.fragment`
  wallet_transactions t
  LEFT JOIN verifications v ON t.kind IN ('verification', 'fixture_verification', 'face_match') AND v.reference_id = t.reference
  LEFT JOIN topups p ON t.kind = 'topup' AND p.reference = t.reference
  LEFT JOIN users u ON u.id = COALESCE(v.user_id, p.user_id)
  LEFT JOIN api_clients c ON c.id = COALESCE(v.api_client_id, p.api_client_id)`;

function where(f: LedgerFilter, beforeId?: number) {
  const parts = [sql.fragment`t.org_id = ${f.orgId}`];
  if (f.kind) parts.push(sql.fragment`t.kind = ${f.kind}`);
  if (f.range.since) parts.push(sql.fragment`t.created_at >= ${sql.timestamp(f.range.since)}`);
  if (f.range.before) parts.push(sql.fragment`t.created_at < ${sql.timestamp(f.range.before)}`);
  if (beforeId !== undefined) parts.push(sql.fragment`t.id < ${beforeId}`);
  return sql.join(parts, sql.fragment` AND `);
}

/** Up to `limit` lines below `beforeId` (all when it is absent), newest first. */
export async function listLedgerLines(db: CommonQueryMethods, f: LedgerFilter, limit: number, beforeId?: number): Promise<readonly LedgerRow[]> {
  return db.any(sql.type(ledgerRow)`
    SELECT ${columns} FROM ${withActor} WHERE ${where(f, beforeId)} ORDER BY t.id DESC LIMIT ${limit}`);
}

const csvField: Record<LedgerCsvColumn, ReturnType<typeof sql.fragment>> = {
  id: sql.fragment`t.id::text`,
  kind: csvText(sql.fragment`t.kind`),
  amount: sql.fragment`t.amount::text`,
  vat_amount: sql.fragment`COALESCE(t.vat_amount::text, '')`,
  service_charge: sql.fragment`COALESCE(t.service_charge::text, '')`,
  units_delta: sql.fragment`t.units_delta::text`,
  units_before: sql.fragment`t.units_before::text`,
  units_after: sql.fragment`t.units_after::text`,
  reference: csvText(sql.fragment`t.reference`),
  details: csvText(sql.fragment`t.details::text`),
  created_at: csvInstant(sql.fragment`t.created_at`),
  username: csvName(sql.fragment`u.username`),
  api_client_id: csvText(sql.fragment`c.client_id`),
  api_client_name: csvName(sql.fragment`c.name`),
  description: csvText(description),
};

/** Every line of the filter as a CSV line, newest first, streamed (see streamCsvLines). */
export async function streamLedgerCsvLines(db: DatabasePool, f: LedgerFilter, onStream: (rows: NodeJS.ReadableStream) => void): Promise<void> {
  await streamCsvLines(db, csvLine(LEDGER_CSV_COLUMNS, csvField), sql.fragment`FROM ${withActor} WHERE ${where(f)} ORDER BY t.id DESC`, onStream);
}
