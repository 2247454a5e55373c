import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';

// CSV fields as PostgreSQL writes them for the streamed exports (RFC 4180): quoted when they hold a
// comma, quote or line break, quotes doubled, NULL as an empty field.

type Fragment = ReturnType<typeof sql.fragment>;

// Each value is parenthesised where it is used: an expression such as `consent->>'channel'` would
// otherwise bind to the neighbouring `||` or `~` first (they share a precedence level).
export const csvText = (text: Fragment): Fragment => sql.fragment`
  CASE WHEN (${text}) ~ E'[",\\r\\n]' THEN '"' || replace((${text}), '"', '""') || '"' ELSE COALESCE((${text}), '') END`;

/**
 * Names people typed (usernames, API client names) could start a spreadsheet formula: such a value
 * gets a leading apostrophe, as OWASP advises for CSV exports.
 */
export const csvName = (text: Fragment): Fragment =>
  csvText(sql.fragment`CASE WHEN left((${text}), 1) IN ('=', '+', '-', '@', chr(9), chr(13)) THEN '''' || (${text}) ELSE (${text}) END`);

/** An instant as the JSON lists write it: ISO 8601, UTC, milliseconds. */
export const csvInstant = (ts: Fragment): Fragment => sql.fragment`COALESCE(to_char(${ts} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), '')`;

/** The fields of one row joined into a CSV line, in the given column order. */
export function csvLine<C extends string>(columns: readonly C[], fields: Record<C, Fragment>): ReturnType<typeof sql.join> {
  return sql.join(
    columns.map((c) => fields[c]),
    sql.fragment` || ',' || `,
  );
}

const csvLineRow = z.object({ line: z.string() });

/**
 * Runs `SELECT <line> AS line FROM <from>` through a server-side cursor (pg-query-stream under
 * slonik's `stream`): rows arrive in batches as the consumer asks for them, so memory stays flat
 * however long the list, and a slow consumer slows the reading instead of piling rows up. PostgreSQL
 * formats each line: one string per row is far less for the API's garbage collector than a parsed row.
 * `onStream` receives the row stream once the query is under way; the promise settles when the last
 * row has been handed over (or the stream was destroyed). `db` should be a pool whose statement
 * timeout allows for the client's reading time (the export pool). The stream runs straight on the
 * pool, never inside a transaction or a held connection: after a consumer destroys the stream, a
 * further query on that same connection would never complete.
 */
export async function streamCsvLines(
  db: DatabasePool,
  line: ReturnType<typeof sql.join>,
  rest: Fragment,
  onStream: (rows: NodeJS.ReadableStream) => void,
): Promise<void> {
  await db.stream(sql.type(csvLineRow)`SELECT ${line} AS line ${rest}`, (stream) => onStream(stream as unknown as NodeJS.ReadableStream));
}
