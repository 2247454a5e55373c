import { AsyncLocalStorage } from 'node:async_hooks';
import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { clientPrincipalQuery, clientPrincipalRow, principalRow, userPrincipalQuery } from '../organisations/index.ts';
import type { TokenClaims } from './auth.schemas.ts';
import { subjectOf } from './auth.service.ts';

const batchRow = z.object({ n: z.coerce.number(), principal: z.unknown() }).loose();
const MAX_BATCH = 64;
// One statement under way per reader, so that the requests arriving meanwhile share the next; one
// that is still under way after SLOW_MS (a connection lost without a reset, a database that stopped
// answering) no longer holds the others back: another starts beside it, up to MAX_IN_FLIGHT.
const SLOW_MS = 100;
const MAX_IN_FLIGHT = 4;

export type PrincipalRow = z.infer<typeof principalRow> | z.infer<typeof clientPrincipalRow>;
export type AlongRead = { row: Record<string, unknown>; principalRow: PrincipalRow | null };

/**
 * A route's one-row query, given as SQL over the reading's key and the token's organisation (`i.key`,
 * `i.org`): it must return at most one row, whose columns come back beside the principal's (columns
 * named `n` or `principal` are the reader's own).
 */
export type Alongside = (key: FragmentSqlToken, org: FragmentSqlToken) => FragmentSqlToken;

/**
 * The token's principal and a route's own row in one statement: on the hottest reads (a requery)
 * the principal's separate query was a third of the database work, a round trip and a wake-up of a
 * backend per request. It is still read for this very request, at the same snapshot as its row, by
 * a statement that starts after the request arrived, so nothing about it is cached: a change
 * committed before the request is seen.
 *
 * Without `alongside`, the principal alone (every other authenticated route: `authenticate`).
 *
 * The readings of concurrent requests share that statement: while one is under way, the requests
 * that arrive wait and are read together by the next (up to 64, one `unnest` row each), as the
 * audit trail's writer batches its events. One statement for many requests is one round trip, one
 * parse of its answer and one wake-up of a backend for all of them. A failed statement fails every
 * request it read for (each then answers as a database fault does: 503 or 500).
 */
export function alongReader(db: CommonQueryMethods, name: string, alongside: Alongside | null): (c: TokenClaims, key: string) => Promise<AlongRead> {
  type Waiting = { c: TokenClaims; key: string; resolve(r: AlongRead): void; reject(err: unknown): void };
  const waiting: Waiting[] = [];
  let inFlight = 0;
  // Of those, the ones whose statement has been under way longer than SLOW_MS.
  let slow = 0;
  // A new statement may start when none is under way, or when every one under way is slow.
  const mayStart = () => inFlight === slow && inFlight < MAX_IN_FLIGHT;
  // The statements run in the reader's own async context, not in that of the request that happened
  // to start them (slonik refuses a pool query made inside a transaction's context).
  const inOwnContext = AsyncLocalStorage.snapshot();
  const start = () => {
    inFlight++;
    inOwnContext(() => void run());
  };
  const run = async () => {
    try {
      while (waiting.length > 0) {
        const batch = waiting.splice(0, MAX_BATCH);
        let late = false;
        const timer = setTimeout(() => {
          late = true;
          slow++;
          if (waiting.length > 0 && mayStart()) start();
        }, SLOW_MS);
        timer.unref();
        try {
          const rows = await readBatch(db, name, alongside, batch);
          batch.forEach((w, i) => settle(w, rows[i], i));
        } catch (err) {
          for (const w of batch) w.reject(err);
        } finally {
          clearTimeout(timer);
          if (late) slow--;
        }
      }
    } finally {
      inFlight--;
    }
  };
  return (c, key) =>
    new Promise<AlongRead>((resolve, reject) => {
      waiting.push({ c, key, resolve, reject });
      if (mayStart()) start();
    });
}

function settle(w: { c: TokenClaims; resolve(r: AlongRead): void; reject(err: unknown): void }, row: Record<string, unknown> | undefined, i: number) {
  try {
    // Each row names the reading it answers (its place in the batch, from 1).
    if (!row || Number(row.n) !== i + 1) throw new Error('along: the statement did not answer the readings in order');
    const { n: _, principal: json, ...rest } = row;
    if (json === null) return w.resolve({ row: rest, principalRow: null });
    // A row the schema does not know is our fault (a 500), never the caller's (a ZodError would be a 4xx).
    const parsed = subjectOf(w.c).kind === 'client' ? clientPrincipalRow.safeParse(json) : principalRow.safeParse(json);
    if (!parsed.success) throw new Error('along: the principal row does not match its schema');
    w.resolve({ row: rest, principalRow: parsed.data });
  } catch (err) {
    w.reject(err);
  }
}

/** One statement for the batch, prepared (its text is the same whatever the batch's size). */
async function readBatch(db: CommonQueryMethods, name: string, alongside: Alongside | null, batch: readonly { c: TokenClaims; key: string }[]) {
  const subjects = batch.map((w) => subjectOf(w.c));
  const userIds = subjects.map((s) => (s.kind === 'user' ? String(s.userId) : null));
  const clientIds = subjects.map((s) => (s.kind === 'client' ? s.clientId : null));
  const rows = await db.any(sql.prepared(`${name}_along`, batchRow)`
    SELECT a.*,
           i.n,
           CASE WHEN i.user_id IS NOT NULL
             THEN (SELECT row_to_json(p) FROM (${userPrincipalQuery(sql.fragment`i.user_id`)}) p)
             ELSE (SELECT row_to_json(p) FROM (${clientPrincipalQuery(sql.fragment`i.client_id`)}) p)
           END AS principal
    FROM unnest(
      ${sql.array(userIds, 'int8')}, ${sql.array(clientIds, 'text')},
      ${sql.array(batch.map((w) => w.key), 'text')}, ${sql.array(batch.map((w) => (w.c.org === null ? null : String(w.c.org))), 'int8')}
    ) WITH ORDINALITY AS i(user_id, client_id, key, org, n)
    ${alongside ? sql.fragment`LEFT JOIN LATERAL (${alongside(sql.fragment`i.key`, sql.fragment`i.org`)}) a ON true` : sql.fragment`, LATERAL (SELECT) a`}
    ORDER BY i.n`);
  if (rows.length !== batch.length) throw new Error(`along: ${batch.length} readings asked, ${rows.length} rows returned`);
  return rows;
}
