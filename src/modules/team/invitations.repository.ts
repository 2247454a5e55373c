import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { orgRoleSchema, roles } from '../../lib/roles.ts';

const time = z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v));

export const invitationRow = z.object({
  id: z.coerce.number(),
  org_id: z.coerce.number(),
  email: z.string(),
  username: z.string(),
  role: orgRoleSchema,
  created_at: time,
  expires_at: time,
  accepted_at: time.nullable(),
  revoked_at: time.nullable(),
  user_id: z.coerce.number().nullable(),
});
export type InvitationRow = z.infer<typeof invitationRow>;

const COLUMNS = sql.fragment`id, org_id, email, username, role, created_at, expires_at, accepted_at, revoked_at, user_id`;

export async function insertInvitation(
  db: CommonQueryMethods,
  i: { orgId: number; email: string; username: string; role: string; tokenHash: Buffer; invitedBy: number | null; now: Date; expiresAt: Date },
): Promise<InvitationRow> {
  return db.one(sql.type(invitationRow)`
    INSERT INTO invitations (org_id, email, username, role, token_hash, invited_by, created_at, expires_at)
    VALUES (${i.orgId}, ${i.email}, ${i.username}, ${i.role}, ${sql.binary(i.tokenHash)}, ${i.invitedBy}, ${sql.timestamp(i.now)}, ${sql.timestamp(i.expiresAt)})
    RETURNING ${COLUMNS}`);
}

export async function listInvitations(db: CommonQueryMethods, orgId: number): Promise<readonly InvitationRow[]> {
  return db.any(sql.type(invitationRow)`SELECT ${COLUMNS} FROM invitations WHERE org_id = ${orgId} ORDER BY id DESC LIMIT 500`);
}

/** Revokes an open invitation of the organisation; null when there is none such (unknown, another organisation's, used, revoked). */
export async function revokeInvitation(db: CommonQueryMethods, orgId: number, id: number, now: Date): Promise<InvitationRow | null> {
  return db.maybeOne(sql.type(invitationRow)`
    UPDATE invitations SET revoked_at = ${sql.timestamp(now)}
    WHERE id = ${id} AND org_id = ${orgId} AND accepted_at IS NULL AND revoked_at IS NULL
    RETURNING ${COLUMNS}`);
}

/**
 * Whether the invitation's sender may still manage the organisation's team: active, of the same
 * organisation, in a role that administers it, the organisation not retired. An invitation is the
 * sender's authority carried forward; it ends with that authority (a disabled or demoted
 * administrator's invitations no longer make users).
 */
export async function inviterStillEntitled(db: CommonQueryMethods, invitationId: number): Promise<boolean> {
  return db.exists(sql.unsafe`
    SELECT 1 FROM invitations i
      JOIN users u ON u.id = i.invited_by AND u.org_id = i.org_id
      JOIN organisations o ON o.id = i.org_id
    WHERE i.id = ${invitationId} AND NOT u.disabled AND o.deleted_at IS NULL
      AND u.role = ANY(${sql.array(roles.rolesWith('administer_organisation'), 'text')})`);
}

/** The invitation a token names; with `lock`, locked until the accepting transaction ends (a second acceptance waits, then sees it used). */
export async function findInvitationByToken(db: CommonQueryMethods, tokenHash: Buffer, o: { lock: boolean }): Promise<InvitationRow | null> {
  const lock = o.lock ? sql.fragment`FOR UPDATE` : sql.fragment``;
  return db.maybeOne(sql.type(invitationRow)`SELECT ${COLUMNS} FROM invitations WHERE token_hash = ${sql.binary(tokenHash)} ${lock}`);
}

export async function markAccepted(db: CommonQueryMethods, id: number, userId: number, now: Date): Promise<void> {
  await db.query(sql.unsafe`UPDATE invitations SET accepted_at = ${sql.timestamp(now)}, user_id = ${userId} WHERE id = ${id}`);
}

/** Closes an open invitation whatever its organisation (the service's own revocation: its username was taken first). */
export async function closeInvitation(db: CommonQueryMethods, id: number, now: Date): Promise<void> {
  await db.query(sql.unsafe`UPDATE invitations SET revoked_at = ${sql.timestamp(now)} WHERE id = ${id} AND accepted_at IS NULL AND revoked_at IS NULL`);
}

const senderRow = z.object({ email: z.string().nullable(), organisation: z.string() });

/** Who sent an invitation (their address, if any) and the organisation's name, for a notice to them. */
export async function invitationSender(db: CommonQueryMethods, id: number): Promise<z.infer<typeof senderRow> | null> {
  return db.maybeOne(sql.type(senderRow)`
    SELECT u.email, o.name AS organisation
    FROM invitations i JOIN organisations o ON o.id = i.org_id LEFT JOIN users u ON u.id = i.invited_by
    WHERE i.id = ${id}`);
}
