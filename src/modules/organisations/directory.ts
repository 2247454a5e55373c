import { sql, type CommonQueryMethods } from 'slonik';
import { loyaltyBadge } from './loyalty.ts';
import { orgColumns } from './organisations.repository.ts';
import { organisationRow, userRow, type UserRow } from './organisations.schemas.ts';
import { usernameProblems } from './usernames.ts';
import { z } from 'zod';

/**
 * Every organisation, retired ones included, in id order for keyset pages (the platform
 * administrators' view). `afterId` is the last id of the previous page.
 */
export async function listOrganisations(db: CommonQueryMethods, page: { limit: number; afterId?: number }) {
  const after = page.afterId === undefined ? sql.fragment`` : sql.fragment`WHERE o.id > ${page.afterId}`;
  const rows = await db.any(sql.type(organisationRow)`
    SELECT ${orgColumns} FROM organisations o JOIN wallets w ON w.org_id = o.id
    ${after} ORDER BY o.id LIMIT ${page.limit}`);
  return rows.map((row) => ({ ...row, loyalty_badge: loyaltyBadge(row.tenancy, row.lifetime_units) }));
}

/** The users of several organisations in one query, grouped by organisation id. */
export async function usersByOrganisation(db: CommonQueryMethods, orgIds: readonly number[]): Promise<Map<number, UserRow[]>> {
  const byOrg = new Map<number, UserRow[]>(orgIds.map((id) => [id, []]));
  if (orgIds.length === 0) return byOrg;
  const rows = await db.any(sql.type(userRow)`
    SELECT id, org_id, username, email, role, disabled, must_change_password FROM users
    WHERE org_id = ANY(${sql.array([...orgIds], 'int8')}) ORDER BY org_id, id`);
  for (const u of rows) byOrg.get(u.org_id!)?.push(u);
  return byOrg;
}

/**
 * Existing users whose username breaks today's rules (made before the rules existed): reported,
 * never changed, since the owner signs in with it. The operator's `user:check-names`.
 */
export async function findUsernameProblems(db: CommonQueryMethods) {
  const rows = await db.any(sql.type(z.object({ id: z.coerce.number(), org_id: z.coerce.number().nullable(), username: z.string() }))`
    SELECT id, org_id, username FROM users ORDER BY id`);
  return rows.flatMap((u) => {
    const problems = usernameProblems(u.username);
    // NFKC is checked too: a stored name that normalisation would change is what look-alikes are made of.
    if (u.username !== u.username.normalize('NFKC')) problems.push('is not NFKC-normalised');
    return problems.length > 0 ? [{ id: u.id, org_id: u.org_id, problems }] : [];
  });
}
