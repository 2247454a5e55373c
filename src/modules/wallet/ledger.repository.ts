import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import type { TimeRange } from '../../lib/pagination.ts';
import { z } from 'zod';
import { LEDGER_CSV_COLUMNS, ledgerRow, type LedgerKind, type LedgerRow } from './ledger.schemas.ts';

// Reads of an organisation's ledger. Newest first by id: ids only grow, so "id below the cursor" is
// a stable page boundary whatever is appended meanwhile, and (org_id, id) is already indexed.

export type LedgerFilter = { orgId: number; kind?: LedgerKind; range: TimeRange };

const columns = sql.fragment`
  id, kind, amount, vat_amount, service_charge, units_delta, units_before, units_after, reference, details, created_at`;

function where(f: LedgerFilter, beforeId?: number) {
  const parts = [sql.fragment`org_id = ${f.orgId}`];
  if (f.kind) parts.push(sql.fragment`kind = ${f.kind}`);
  if (f.range.since) parts.push(sql.fragment`created_at >= ${sql.timestamp(f.range.since)}`);
  if (f.range.before) parts.push(sql.fragment`created_at < ${sql.timestamp(f.range.before)}`);
  if (beforeId !== undefined) parts.push(sql.fragment`id < ${beforeId}`);
  return sql.join(parts, sql.fragment` AND `);
}

/** Up to `limit` lines below `beforeId` (all when it is absent), newest first. */
export async function listLedgerLines(db: CommonQueryMethods, f: LedgerFilter, limit: number, beforeId?: number): Promise<readonly LedgerRow[]> {
  return db.any(sql.type(ledgerRow)`
    SELECT ${columns} FROM wallet_transactions WHERE ${where(f, beforeId)} ORDER BY id DESC LIMIT ${limit}`);
}

// A CSV field as PostgreSQL writes it (RFC 4180): quoted when it holds a comma, quote or line break,
// quotes doubled, NULL as an empty field.
const quoted = (text: ReturnType<typeof sql.fragment>) => sql.fragment`
  CASE WHEN ${text} ~ E'[",\\r\\n]' THEN '"' || replace(${text}, '"', '""') || '"' ELSE COALESCE(${text}, '') END`;

const csvField: Record<(typeof LEDGER_CSV_COLUMNS)[number], ReturnType<typeof sql.fragment>> = {
  id: sql.fragment`id::text`,
  kind: quoted(sql.fragment`kind`),
  amount: sql.fragment`amount::text`,
  vat_amount: sql.fragment`COALESCE(vat_amount::text, '')`,
  service_charge: sql.fragment`COALESCE(service_charge::text, '')`,
  units_delta: sql.fragment`units_delta::text`,
  units_before: sql.fragment`units_before::text`,
  units_after: sql.fragment`units_after::text`,
  reference: quoted(sql.fragment`reference`),
  details: quoted(sql.fragment`details::text`),
  created_at: sql.fragment`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
};

const csvLineRow = z.object({ line: z.string() });

/**
 * Every line of the filter as a CSV line, newest first, read through a server-side cursor
 * (pg-query-stream under slonik's `stream`): rows arrive in batches as the consumer asks for them,
 * so memory stays flat however long the ledger, and a slow consumer slows the reading instead of
 * piling rows up. PostgreSQL formats each line: one string per row is far less for the API's
 * garbage collector than a parsed row, which keeps a long export's memory where a short one's is.
 * `onStream` receives the row stream once the query is under way; the promise settles when the last
 * row has been handed over (or the stream was destroyed).
 * `db` should be a pool whose statement timeout allows for the client's reading time: the cursor's
 * statement lasts that long. The stream runs straight on the pool, never inside a transaction or a
 * held connection: after a consumer destroys the stream, a further query on that same connection
 * would never complete.
 */
export async function streamLedgerCsvLines(db: DatabasePool, f: LedgerFilter, onStream: (rows: NodeJS.ReadableStream) => void): Promise<void> {
  const line = sql.join(
    LEDGER_CSV_COLUMNS.map((c) => csvField[c]),
    sql.fragment` || ',' || `,
  );
  await db.stream(sql.type(csvLineRow)`
    SELECT ${line} AS line FROM wallet_transactions WHERE ${where(f)} ORDER BY id DESC`, (stream) => onStream(stream as unknown as NodeJS.ReadableStream));
}
