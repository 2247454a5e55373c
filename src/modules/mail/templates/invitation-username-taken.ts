import type { Words } from './format.ts';

export type InvitationUsernameTakenData = { organisation: string; username: string; invitee: string };

/** The sender's notice: which invitation could not be accepted, and what to do (invite again with another username). */
export function invitationUsernameTaken(d: InvitationUsernameTakenData, portal: string): Words {
  const text = [
    `Your invitation of ${d.invitee} to ${d.organisation}, with the username "${d.username}", could not be accepted: that username was taken by another account before the invitation was accepted.`,
    '',
    'The invitation is now closed. To invite this person again, send a new invitation with another username:',
    `${portal}/portal/team`,
    '',
  ].join('\n');
  return { subject: `An invitation to ${d.organisation} could not be accepted`, text };
}
