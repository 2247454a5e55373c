import { roles } from '../../../lib/roles.ts';
import type { Words } from './format.ts';

/** `link`: the page where the invitee chooses their password; `validHours`: how long it works. */
export type InvitationData = { organisation: string; username: string; role: string; link: string; validHours: number };

/**
 * The invitee's e-mail, for every role alike: the portal's page (or INVITATION_URL) where they choose
 * their password, in plain words; then how to sign in. No API call is named: the invitee is a person,
 * and an integrator who builds their own page (INVITATION_URL) reads the token from their own link.
 */
export function invitation(d: InvitationData): Words {
  const text = [
    `You are invited to join ${d.organisation} on the identity verification service, as ${roles.label(d.role)}, with the username "${d.username}".`,
    '',
    `To accept, open this link within ${d.validHours} hours and choose your password (the link works once):`,
    d.link,
    '',
    `Then sign in with the username "${d.username}" and the password you chose.`,
    '',
    'If you did not expect this, ignore this e-mail: no account is made until the link is used.',
    '',
  ].join('\n');
  return { subject: `You are invited to ${d.organisation}`, text };
}
