import type { Words } from './format.ts';

/** `link`: the integrator's page for the token (PASSWORD_RESET_URL), when there is one. */
export type PasswordResetData = { username: string; token: string; link: string | null; validMinutes: number };

export function passwordReset(d: PasswordResetData): Words {
  const text = [
    `Someone asked to reset the password of the account "${d.username}".`,
    '',
    ...(d.link ? [`Choose a new password here within ${d.validMinutes} minutes:`, d.link, ''] : []),
    `Reset token (valid ${d.validMinutes} minutes, usable once): ${d.token}`,
    'Send it with your new password to POST /v1/reset-password.',
    '',
    'If you did not ask for this, ignore this e-mail: your password stays as it is.',
    '',
  ].join('\n');
  return { subject: 'Reset your password', text };
}
