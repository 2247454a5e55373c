import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { clientPrincipalQuery, clientPrincipalRow, principalRow, userPrincipalQuery } from '../organisations/index.ts';
import type { TokenClaims } from './auth.schemas.ts';
import { subjectOf } from './auth.service.ts';

const combined = z.object({ principal: z.unknown() }).loose();

/**
 * The token's principal and a route's own row in one statement: on the hottest reads (a requery)
 * the principal's separate query was a third of the database work, a round trip and a wake-up of a
 * backend per request. It is still read by this very request, at the same snapshot as the row, so
 * nothing about it is cached: a change committed before the statement is seen by it.
 *
 * `alongside` returns at most one row; its columns come back beside `principal` (the principal row
 * as JSON, null when the user or client no longer exists), all null when it found nothing. The
 * statement is prepared under `name` plus the subject's kind, so each shape is planned once per
 * connection.
 */
export async function readWithPrincipal(db: CommonQueryMethods, c: TokenClaims, name: string, alongside: FragmentSqlToken) {
  const s = subjectOf(c);
  const principal = s.kind === 'client' ? clientPrincipalQuery(s.clientId) : userPrincipalQuery(s.userId);
  const row = await db.one(sql.prepared(`${name}_${s.kind}`, combined)`
    SELECT (SELECT row_to_json(p) FROM (${principal}) p) AS principal, a.*
    FROM (SELECT 1) one LEFT JOIN LATERAL (${alongside}) a ON true`);
  const { principal: json, ...rest } = row;
  if (json === null) return { row: rest, principalRow: null };
  // A row the schema does not know is our fault (a 500), never the caller's (a ZodError would be a 4xx).
  const parsed = s.kind === 'client' ? clientPrincipalRow.safeParse(json) : principalRow.safeParse(json);
  if (!parsed.success) throw new Error(`${name}: the principal row does not match its schema`);
  return { row: rest, principalRow: parsed.data };
}
