import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import { DISABLED_BY_ORG_ADMINISTRATOR, orgRoleSchema, roles, type OrgRole } from '../../lib/roles.ts';

const int = z.union([z.number(), z.bigint(), z.string()]).transform((v) => Number(v));

/** A user as an organisation administrator sees it: no password hash, no organisation id. */
export const teamMemberRow = z.object({
  id: int,
  username: z.string(),
  email: z.string().nullable(),
  role: orgRoleSchema,
  disabled: z.boolean(),
  created_at: z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v).toISOString()),
});
export type TeamMember = z.infer<typeof teamMemberRow>;

export const LAST_ADMIN = "Cannot remove the organisation's last administrator";
export const DISABLED_BY_OPERATOR = 'This user was disabled by an operator: only an operator can enable them again (user:enable)';
// First key of pg_advisory_xact_lock(int, int) for team changes; the second is the organisation.
const TEAM_LOCK = 0x7465616d;

const columns = sql.fragment`id, username, email, role, disabled, created_at`;

export async function listTeamMembers(db: DatabasePool, orgId: number): Promise<readonly TeamMember[]> {
  return db.any(sql.type(teamMemberRow)`SELECT ${columns} FROM users WHERE org_id = ${orgId} ORDER BY id`);
}

/**
 * Enables, disables, promotes or demotes a user of the organisation, refusing to leave it without an
 * active administrator. Changes to one organisation's team are serialised by an advisory lock: two
 * administrators demoting each other at once would otherwise each still see the other as active and
 * both succeed. The lock names no table row, so it never waits on verifications or the wallet.
 */
export async function updateTeamMember(db: DatabasePool, orgId: number, userId: number, change: { disabled?: boolean; role?: OrgRole }): Promise<TeamMember> {
  return db.transaction(async (tx) => {
    await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(${TEAM_LOCK}, (${orgId}::bigint % 2147483647)::int)`);
    // FOR UPDATE: an operator's user:disable landing between this read and the write below waits,
    // so it is never overwritten by an administrator's enable.
    const current = await tx.maybeOne(sql.type(teamMemberRow.extend({ disabled_by: z.string().nullable() }))`
      SELECT ${columns}, disabled_by FROM users WHERE id = ${userId} AND org_id = ${orgId} FOR UPDATE`);
    if (!current) throw new AppError('not_found', 'User not found');
    const role = change.role ?? current.role;
    const disabled = change.disabled ?? current.disabled;
    if (current.disabled_by === 'operator' && !disabled) throw new AppError('forbidden', DISABLED_BY_OPERATOR);
    // An operator's disabling stays the operator's; a fresh one here is the administrator's.
    const disabledBy = !disabled ? null : current.disabled ? current.disabled_by : DISABLED_BY_ORG_ADMINISTRATOR;
    const wasActiveAdmin = roles.may(current.role, 'administer_organisation') && !current.disabled;
    if (wasActiveAdmin && (!roles.may(role, 'administer_organisation') || disabled)) {
      const others = await tx.oneFirst(sql.type(z.object({ n: int }))`
        SELECT count(*) AS n FROM users WHERE org_id = ${orgId} AND role = ANY(${sql.array(roles.rolesWith('administer_organisation'), 'text')}) AND NOT disabled AND id <> ${userId}`);
      if (others === 0) throw new AppError('conflict', LAST_ADMIN);
    }
    // Ending the user's tokens on a role or disabled change is the users_token_version trigger's job.
    return tx.one(sql.type(teamMemberRow)`
      UPDATE users SET role = ${role}, disabled = ${disabled}, disabled_by = ${disabledBy}
      WHERE id = ${userId} AND org_id = ${orgId} RETURNING ${columns}`);
  });
}
