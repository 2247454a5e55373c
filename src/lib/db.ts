import pg from 'pg';
import { createPool, InvalidInputError, SchemaValidationError, type CommonQueryMethods, type DatabasePool, type Interceptor, type QueryResultRow } from 'slonik';

export type { DatabasePool };
export type { DatabaseTransactionConnection, CommonQueryMethods } from 'slonik';

// slonik leaves result validation to an interceptor: every `sql.type(schema)` query is parsed here,
// so repository functions return exactly the types their zod schemas promise.
const resultParser: Interceptor = {
  name: 'result-parser',
  transformRow: (ctx, query, row) => {
    const parser = ctx.resultParser;
    if (!parser) return row;
    const result = parser['~standard'].validate(row);
    if (result instanceof Promise) throw new Error('async result schemas are not supported');
    if (result.issues) throw new SchemaValidationError(query, row, result.issues);
    return result.value as QueryResultRow;
  },
};

/**
 * `connectTimeoutMs`: how long opening a connection may take before it fails. The API passes a short
 * one (API_DB_CONNECT_TIMEOUT_MS): with PostgreSQL out of reach, a request queued behind connection
 * attempts that hang then answers 503 within that bound instead of waiting for the database.
 */
export const API_DB_CONNECT_TIMEOUT_MS = 500;

export async function createDb(url: string, opts: { maxPoolSize: number; statementTimeoutMs?: number; connectTimeoutMs?: number }): Promise<DatabasePool> {
  return createPool(url, {
    maxPoolSize: opts.maxPoolSize,
    interceptors: [resultParser],
    statementTimeout: opts.statementTimeoutMs ?? 30000,
    // Capturing a stack per query costs CPU on every request for a debugging aid we do not use.
    captureStackTrace: false,
    connectionTimeout: opts.connectTimeoutMs ?? 5000,
    // A failed connection attempt is not retried on the spot: the caller answers 503 (API) or BullMQ retries (workers).
    connectionRetryLimit: 0,
    idleTimeout: 30000,
    // slonik's default runs DISCARD ALL on every release: a round trip per query. It must stay off:
    // the hot statements are named prepared statements (sql.prepared), which pg remembers per
    // connection, and DISCARD ALL would drop them on the server while pg still believes they exist
    // ("prepared statement ... does not exist" on the next use). No other session state is kept.
    resetConnection: async () => {},
  });
}

/** Creates the database named in `url` when it does not exist (first start on a fresh machine). */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new Error('database name must be [A-Za-z0-9_-]');
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    for (let attempt = 0; ; attempt++) {
      const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (found.rowCount !== 0) return;
      try {
        await client.query(`CREATE DATABASE "${name}"`);
        return;
      } catch (err) {
        // Two processes starting together race to create it: the loser sees it exists (42P04, or
        // 23505 from the catalogue's unique index), or finds template1 busy with the winner's copy
        // (55006) and tries again.
        const code = (err as { code?: string }).code;
        if (code === '42P04' || code === '23505') return;
        if (code !== '55006' || attempt >= 20) throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  } finally {
    await client.end();
  }
}

/** The SQLSTATE of a PostgreSQL error, wherever slonik wrapped it. */
export function postgresCode(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
  }
  return undefined;
}

/**
 * A statement PostgreSQL refused for the values it was given (SQLSTATE class 22, a data exception,
 * or 23, an integrity constraint), or one slonik refused to send: it was rolled back (or never
 * ran), so nothing of it was committed. Any other
 * failure (a lost connection, a timeout) may have come after the COMMIT.
 */
export function refusedForItsValues(err: unknown): boolean {
  // slonik reports 22P02 (invalid text representation) as its own InvalidInputError, without the
  // code; its client-side refusals of a value are InvalidInputErrors too, sent nothing at all.
  if (err instanceof InvalidInputError) return true;
  const code = postgresCode(err);
  return code !== undefined && (code.startsWith('22') || code.startsWith('23'));
}

/** A pool, not a transaction or a checked-out connection (those have an id; only a pool has `connect`). */
export function isPool(db: CommonQueryMethods): db is DatabasePool {
  return 'connect' in db && !('transactionId' in db);
}
