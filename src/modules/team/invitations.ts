import { createHash, randomBytes } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { UniqueIntegrityConstraintViolationError } from 'slonik';
import type { Config } from '../../config.ts';
import { jobIds } from '../../jobs/catalog.ts';
import type { Producer } from '../../jobs/producer.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError, describe } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { roles } from '../../lib/roles.ts';
import { checkNewPassword } from '../accounts/index.ts';
import { auditContext, recordAudit } from '../audit/index.ts';
import type { Principal } from '../auth/index.ts';
import { queueSealedMail, type SealedMail } from '../mail/index.ts';
import { createUser, findUserForLogin, requireOrganisation } from '../organisations/index.ts';
import * as repo from './invitations.repository.ts';
import type { InvitationRow } from './invitations.repository.ts';
import type { NewInvitation } from './team.schemas.ts';
import { requireTeamManager } from './team.service.ts';

type Deps = { config: Config; db: DatabasePool; clock: Clock; producer: Producer; logger: Logger };

export const BAD_INVITATION = 'This invitation is not valid: it was already used or revoked, or the link is wrong';
export const INVITER_GONE = 'This invitation is no longer valid: the administrator who sent it may no longer invite; ask for a new one';
export const EXPIRED_INVITATION = 'This invitation has expired: ask an administrator of the organisation for a new one';

/** 256 random bits: the SHA-256 stored is as hard to reverse as a slow hash would be. */
const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest();

export type InvitationView = {
  id: number;
  email: string;
  username: string;
  role: InvitationRow['role'];
  status: 'pending' | 'accepted' | 'revoked' | 'expired';
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  revoked_at: string | null;
  user_id: number | null;
};

function view(r: InvitationRow, now: Date): InvitationView {
  const status = r.accepted_at ? 'accepted' : r.revoked_at ? 'revoked' : r.expires_at <= now ? 'expired' : 'pending';
  return {
    id: r.id,
    email: r.email,
    username: r.username,
    role: r.role,
    status,
    created_at: r.created_at.toISOString(),
    expires_at: r.expires_at.toISOString(),
    accepted_at: r.accepted_at?.toISOString() ?? null,
    revoked_at: r.revoked_at?.toISOString() ?? null,
    user_id: r.user_id,
  };
}

function invitationLink(config: Config, token: string): string {
  const t = encodeURIComponent(token);
  return config.INVITATION_URL ? config.INVITATION_URL.replaceAll('{token}', t) : `${config.publicBaseUrl}/portal/accept-invitation#token=${t}`;
}

export function renderInvitationMail(config: Config, i: { to: string; organisation: string; username: string; role: string; token: string }): SealedMail {
  const hours = config.INVITATION_TTL_HOURS;
  const text = [
    `You are invited to join ${i.organisation} on the identity verification service, as ${roles.label(i.role)}, with the username "${i.username}".`,
    '',
    `Choose your password here within ${hours} hours (the link works once):`,
    invitationLink(config, i.token),
    '',
    `Invitation token (valid ${hours} hours, usable once): ${i.token}`,
    'Or send it with your password to POST /v1/invitations/accept.',
    '',
    'If you did not expect this, ignore this e-mail: no account is made until the link is used.',
    '',
  ].join('\n');
  return { to: i.to, subject: `You are invited to ${i.organisation}`, text };
}

/**
 * POST /team/invitations: the invitation row and its sealed e-mail in one transaction, the e-mail's
 * job queued after commit (the outbox sweep sends it if that enqueue is lost).
 */
export async function inviteTeamMember(deps: Deps, p: Principal, input: NewInvitation): Promise<InvitationView> {
  const orgId = requireTeamManager(p);
  const org = await requireOrganisation(deps.db, orgId);
  if (await findUserForLogin(deps.db, input.username)) throw new AppError('conflict', `username ${input.username} is taken`);
  const now = deps.clock.now();
  const token = randomBytes(32).toString('base64url');
  let made;
  try {
    made = await deps.db.transaction(async (tx) => {
      const row = await repo.insertInvitation(tx, {
        orgId,
        email: input.email,
        username: input.username,
        role: input.role,
        tokenHash: digest(token),
        invitedBy: p.userId,
        now,
        expiresAt: new Date(now.getTime() + deps.config.INVITATION_TTL_HOURS * 3600_000),
      });
      const outboxId = await queueSealedMail(tx, deps.config.encryptionKeys, {
        kind: 'invitation_email',
        dedupeKey: `invitation-${row.id}`,
        mail: renderInvitationMail(deps.config, { to: input.email, organisation: org.name, username: input.username, role: input.role, token }),
      });
      // A role and the invitation's id: the address and the username stay in the invitation row.
      await recordAudit(tx, { ...auditContext(p), action: 'team.invitation_sent', target: `invitation:${row.id}`, details: { role: input.role } });
      return { row, outboxId };
    });
  } catch (err) {
    if (err instanceof UniqueIntegrityConstraintViolationError) throw new AppError('conflict', `username ${input.username} already has an open invitation`);
    throw err;
  }
  try {
    await deps.producer.enqueue('outbox.deliver', { outboxId: made.outboxId }, { jobId: jobIds.outbox(made.outboxId) });
  } catch (err) {
    deps.logger.warn({ err: describe(err), outboxId: made.outboxId }, 'invitation e-mail not queued; the outbox sweep will send it');
  }
  return view(made.row, now);
}

export async function listTeamInvitations(deps: { db: DatabasePool; clock: Clock }, p: Principal): Promise<InvitationView[]> {
  const orgId = requireTeamManager(p);
  const now = deps.clock.now();
  return (await repo.listInvitations(deps.db, orgId)).map((r) => view(r, now));
}

export async function revokeTeamInvitation(deps: { db: DatabasePool; clock: Clock }, p: Principal, id: number): Promise<InvitationView> {
  const orgId = requireTeamManager(p);
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const row = await repo.revokeInvitation(tx, orgId, id, now);
    if (!row) throw new AppError('not_found', 'Open invitation not found');
    await recordAudit(tx, { ...auditContext(p), action: 'team.invitation_revoked', target: `invitation:${row.id}` });
    return view(row, now);
  });
}

/**
 * POST /invitations/accept: the token proves the invitee; the user is made with the password they
 * chose, and the invitation is used, in one transaction (the row is locked, so a second acceptance
 * waits and then finds it used).
 */
export async function acceptInvitation(deps: { db: DatabasePool; clock: Clock }, body: { token: string; password: string }) {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const inv = await repo.lockInvitationByToken(tx, digest(body.token));
    if (!inv || inv.accepted_at || inv.revoked_at) throw new AppError('bad_request', BAD_INVITATION);
    if (inv.expires_at <= now) throw new AppError('bad_request', EXPIRED_INVITATION);
    // Read in the accepting transaction: a sender disabled or demoted before this commit is seen.
    if (!(await repo.inviterStillEntitled(tx, inv.id))) throw new AppError('bad_request', INVITER_GONE);
    checkNewPassword(body.password, inv.username);
    const user = await createUser(tx, { orgId: inv.org_id, username: inv.username, email: inv.email, password: body.password, role: inv.role, requirePasswordChange: false });
    await repo.markAccepted(tx, inv.id, user.id, now);
    await recordAudit(tx, { orgId: inv.org_id, actor: `user:${user.id}`, action: 'team.invitation_accepted', target: `invitation:${inv.id}`, details: { role: inv.role, user: `user:${user.id}` } });
    return { id: user.id, username: inv.username, role: inv.role };
  });
}
