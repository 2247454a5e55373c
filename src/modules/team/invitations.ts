import { createHash, randomBytes } from 'node:crypto';
import type { CommonQueryMethods, DatabasePool, DatabaseTransactionConnection } from 'slonik';
import { UniqueIntegrityConstraintViolationError } from 'slonik';
import type { Config } from '../../config.ts';
import type { Producer } from '../../jobs/producer.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { checkNewPassword } from '../accounts/index.ts';
import { auditContext, recordAudit } from '../audit/index.ts';
import type { Principal } from '../auth/index.ts';
import { deliverSoon, queueMail } from '../mail/index.ts';
import { createUser, findUserForLogin, requireOrganisation } from '../organisations/index.ts';
import * as repo from './invitations.repository.ts';
import type { InvitationRow } from './invitations.repository.ts';
import type { NewInvitation } from './team.schemas.ts';
import { requireTeamManager } from './team.service.ts';

type Deps = { config: Config; db: DatabasePool; clock: Clock; producer: Producer; logger: Logger };

export const BAD_INVITATION = 'This invitation is not valid: it was already used or revoked, or the link is wrong';
export const INVITER_GONE = 'This invitation is no longer valid: the administrator who sent it may no longer invite; ask for a new one';
export const EXPIRED_INVITATION = 'This invitation has expired: ask an administrator of the organisation for a new one';
/** A username some user holds: the answer never says whose (or in which organisation). */
export const USERNAME_NOT_AVAILABLE = 'This username is not available: choose another username';
export const OPEN_INVITATION = 'This username already has an open invitation in your organisation: revoke it to invite again';
/** An acceptance that lost its username to another organisation's invitation accepted first. */
export const USERNAME_TAKEN_SINCE =
  'The username of this invitation is no longer available: the administrator who invited you has been told, and can invite you again with another username';

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

/**
 * POST /team/invitations: the invitation row and its sealed e-mail in one transaction, the e-mail's
 * job queued after commit (the outbox sweep sends it if that enqueue is lost).
 */
export async function inviteTeamMember(deps: Deps, p: Principal, input: NewInvitation): Promise<InvitationView> {
  const orgId = requireTeamManager(p);
  const org = await requireOrganisation(deps.db, orgId);
  if (await findUserForLogin(deps.db, input.username)) throw new AppError('conflict', USERNAME_NOT_AVAILABLE);
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
      // The invitee's e-mail: the page (the portal's, or INVITATION_URL) where they choose their password.
      const outboxId = await queueMail(tx, deps.config, {
        dedupeKey: `invitation-${row.id}`,
        to: input.email,
        message: {
          template: 'invitation',
          data: { organisation: org.name, username: input.username, role: input.role, link: invitationLink(deps.config, token), validHours: deps.config.INVITATION_TTL_HOURS },
        },
      });
      // A role and the invitation's id: the address and the username stay in the invitation row.
      await recordAudit(tx, { ...auditContext(p), action: 'team.invitation_sent', target: `invitation:${row.id}`, details: { role: input.role } });
      return { row, outboxId };
    });
  } catch (err) {
    if (err instanceof UniqueIntegrityConstraintViolationError) throw new AppError('conflict', OPEN_INVITATION);
    throw err;
  }
  await deliverSoon(deps.producer, made.outboxId, deps.logger, 'invitation e-mail');
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

/** The invitation a token names, if it can still be accepted at `now`; else the 400 the acceptance would answer. */
async function usableInvitation(db: CommonQueryMethods, token: string, now: Date, o: { lock: boolean }): Promise<InvitationRow> {
  const inv = await repo.findInvitationByToken(db, digest(token), o);
  if (!inv || inv.accepted_at || inv.revoked_at) throw new AppError('bad_request', BAD_INVITATION);
  if (inv.expires_at <= now) throw new AppError('bad_request', EXPIRED_INVITATION);
  if (!(await repo.inviterStillEntitled(db, inv.id))) throw new AppError('bad_request', INVITER_GONE);
  return inv;
}

/**
 * POST /invitations/preview: what the accept page shows before the invitee chooses a password (the
 * organisation, the role, the username they will sign in with). The token proves the invitee, as it
 * does for the acceptance, and the same refusals apply; nothing changes.
 */
export async function previewInvitation(deps: { db: DatabasePool; clock: Clock }, token: string) {
  const inv = await usableInvitation(deps.db, token, deps.clock.now(), { lock: false });
  const org = await requireOrganisation(deps.db, inv.org_id);
  return { organisation: org.name, role: inv.role, username: inv.username, expires_at: inv.expires_at.toISOString() };
}

/**
 * POST /invitations/accept: the token proves the invitee; the user is made with the password they
 * chose, and the invitation is used, in one transaction (the row is locked, so a second acceptance
 * waits and then finds it used). A username is held only by a user, not by an open invitation: two
 * organisations may invite the same one, and users' unique index decides between them. The user is
 * inserted under a savepoint, so that losing there (another invitation accepted first, even at the
 * same moment: this insert waits on that one's, then fails) still commits this transaction's
 * consequences: the invitation is closed (revoked, with its own audit event) and its sender is told
 * by e-mail. The invitee gets 409.
 */
export async function acceptInvitation(deps: { config: Config; db: DatabasePool; clock: Clock; producer: Producer; logger: Logger }, body: { token: string; password: string }) {
  const now = deps.clock.now();
  const outcome = await deps.db.transaction(async (tx) => {
    // Read in the accepting transaction, the row locked: a sender disabled or demoted before this commit is seen.
    const inv = await usableInvitation(tx, body.token, now, { lock: true });
    checkNewPassword(body.password, inv.username);
    let user;
    try {
      user = await tx.transaction((sp) => createUser(sp, { orgId: inv.org_id, username: inv.username, email: inv.email, password: body.password, role: inv.role, requirePasswordChange: false }));
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'conflict') throw err;
      return { lost: await closeLostInvitation(deps, tx, inv, now) };
    }
    await repo.markAccepted(tx, inv.id, user.id, now);
    await recordAudit(tx, { orgId: inv.org_id, actor: `user:${user.id}`, action: 'team.invitation_accepted', target: `invitation:${inv.id}`, details: { role: inv.role, user: `user:${user.id}` } });
    return { made: { id: user.id, username: inv.username, role: inv.role } };
  });
  if ('made' in outcome) return outcome.made;
  if (outcome.lost !== null) await deliverSoon(deps.producer, outcome.lost, deps.logger, 'invitation e-mail');
  throw new AppError('conflict', USERNAME_TAKEN_SINCE);
}

/**
 * An invitation whose username a user took first: closed (revoked by nobody but the service) and its
 * sender told, in the accepting transaction. The outbox id of the sender's e-mail, or null when the
 * sender has no address (an operator's CLI user may have none; the list shows the invitation revoked).
 */
async function closeLostInvitation(deps: { config: Config }, tx: DatabaseTransactionConnection, inv: InvitationRow, now: Date): Promise<number | null> {
  await repo.closeInvitation(tx, inv.id, now);
  await recordAudit(tx, { orgId: inv.org_id, actor: 'system', action: 'team.invitation_revoked', target: `invitation:${inv.id}`, details: { reason: 'username_taken' } });
  const sender = await repo.invitationSender(tx, inv.id);
  if (!sender?.email) return null;
  return queueMail(tx, deps.config, {
    dedupeKey: `invitation-${inv.id}-username-taken`,
    to: sender.email,
    message: { template: 'invitation_username_taken', data: { organisation: sender.organisation, username: inv.username, invitee: inv.email } },
  });
}
