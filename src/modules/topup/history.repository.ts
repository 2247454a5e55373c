import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { csvInstant, csvLine, csvText, streamCsvLines } from '../../lib/csv-sql.ts';
import type { TimeRange } from '../../lib/pagination.ts';
import { TOPUP_CSV_COLUMNS, topupHistoryRow, type TopupHistoryRow } from './history.schemas.ts';
import type { TopupStatus } from './topup.schemas.ts';

// The invoice is its own table's (one row per credited top-up, by the unique topup_reference).
const invoiceNumber = sql.fragment`(SELECT i.number FROM invoices i WHERE i.topup_reference = topups.reference)`;

const columns = sql.fragment`
  reference, org_id, status, units, bonus_units, base_amount, vat_amount, service_charge, total_amount, paid_amount,
  created_at, credited_at, ${invoiceNumber} AS invoice_number, paid_at,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_key`;

type TopupFilter = { orgId: number; status?: TopupStatus; range: TimeRange };

function filterParts(f: TopupFilter) {
  const parts = [sql.fragment`org_id = ${f.orgId}`];
  if (f.status) parts.push(sql.fragment`status = ${f.status}`);
  if (f.range.since) parts.push(sql.fragment`created_at >= ${sql.timestamp(f.range.since)}`);
  if (f.range.before) parts.push(sql.fragment`created_at < ${sql.timestamp(f.range.before)}`);
  return parts;
}

/**
 * Newest first by (created_at, reference): the pair is unique and the cursor names it exactly, so a
 * page boundary holds while top-ups are added. Served by topups_org_idx (org_id, created_at).
 */
export async function listTopupPage(
  db: CommonQueryMethods,
  f: TopupFilter & { after?: { createdKey: string; reference: string }; limit: number },
): Promise<readonly TopupHistoryRow[]> {
  const parts = filterParts(f);
  if (f.after) parts.push(sql.fragment`(created_at, reference) < (${f.after.createdKey}::timestamptz, ${f.after.reference})`);
  return db.any(sql.type(topupHistoryRow)`
    SELECT ${columns} FROM topups WHERE ${sql.join(parts, sql.fragment` AND `)}
    ORDER BY created_at DESC, reference DESC LIMIT ${f.limit}`);
}

export async function findTopupView(db: CommonQueryMethods, reference: string): Promise<TopupHistoryRow | null> {
  return db.maybeOne(sql.type(topupHistoryRow)`SELECT ${columns} FROM topups WHERE reference = ${reference}`);
}

const num = (column: ReturnType<typeof sql.fragment>) => sql.fragment`COALESCE(${column}::text, '')`;
const csvField: Record<(typeof TOPUP_CSV_COLUMNS)[number], ReturnType<typeof sql.fragment>> = {
  reference: csvText(sql.fragment`reference`),
  status: csvText(sql.fragment`status`),
  units: num(sql.fragment`units`),
  bonus_units: num(sql.fragment`bonus_units`),
  base_amount: num(sql.fragment`base_amount`),
  vat_amount: num(sql.fragment`vat_amount`),
  service_charge: num(sql.fragment`service_charge`),
  total_amount: num(sql.fragment`total_amount`),
  paid_amount: num(sql.fragment`paid_amount`),
  created_at: csvInstant(sql.fragment`created_at`),
  credited_at: csvInstant(sql.fragment`credited_at`),
  invoice_number: csvText(invoiceNumber),
  paid_at: csvInstant(sql.fragment`paid_at`),
};

/** The whole filtered range as CSV lines, newest first, streamed (see streamCsvLines). */
export async function streamTopupCsvLines(db: DatabasePool, f: TopupFilter, onStream: (rows: NodeJS.ReadableStream) => void): Promise<void> {
  const where = sql.join(filterParts(f), sql.fragment` AND `);
  await streamCsvLines(db, csvLine(TOPUP_CSV_COLUMNS, csvField), sql.fragment`FROM topups WHERE ${where} ORDER BY created_at DESC, reference DESC`, onStream);
}
