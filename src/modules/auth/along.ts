import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { batcher } from '../../lib/batch.ts';
import { clientPrincipalQuery, clientPrincipalRow, principalRow, userPrincipalQuery } from '../organisations/index.ts';
import type { TokenClaims } from './auth.schemas.ts';
import { subjectOf } from './auth.service.ts';

const batchRow = z.object({ n: z.coerce.number(), principal: z.unknown() }).loose();
const MAX_BATCH = 64;

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
 * The readings of concurrent requests share that statement (lib/batch.ts, as the audit trail's
 * writer shares its appends): up to 64, one `unnest` row each. A failed statement fails every
 * request it read for (each then answers as a database fault does: 503 or 500).
 */
export function alongReader(db: CommonQueryMethods, name: string, alongside: Alongside | null): (c: TokenClaims, key: string) => Promise<AlongRead> {
  const read = batcher({ maxBatch: MAX_BATCH, run: (batch: Reading[]) => readBatch(db, name, alongside, batch) });
  return async (c, key) => readOf(c, await read({ c, key }));
}

type Reading = { c: TokenClaims; key: string };

function readOf(c: TokenClaims, row: Record<string, unknown>): AlongRead {
  const { n: _, principal: json, ...rest } = row;
  if (json === null) return { row: rest, principalRow: null };
  // A row the schema does not know is our fault (a 500), never the caller's (a ZodError would be a 4xx).
  const parsed = subjectOf(c).kind === 'client' ? clientPrincipalRow.safeParse(json) : principalRow.safeParse(json);
  if (!parsed.success) throw new Error('along: the principal row does not match its schema');
  return { row: rest, principalRow: parsed.data };
}

/** One statement for the batch, prepared (its text is the same whatever the batch's size). */
async function readBatch(db: CommonQueryMethods, name: string, alongside: Alongside | null, batch: readonly Reading[]) {
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
  // Each row names the reading it answers (its place in the batch, from 1).
  if (rows.length !== batch.length || rows.some((r, i) => Number(r.n) !== i + 1)) throw new Error('along: the statement did not answer the readings in order');
  return rows;
}
