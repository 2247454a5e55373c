// Every action the trail records, `<area>.<verb>`. A name outside this list does not compile, so
// the README's list and the code cannot drift apart. Some are recorded by features that arrive
// with their own modules (two-factor sign-in, organisation settings, batches).
export const AUDIT_ACTIONS = [
  'auth.login',
  'auth.login_failed',
  'auth.logout',
  'account.password_changed',
  'account.password_reset',
  'mfa.enrolment_started',
  'mfa.enabled',
  'mfa.disabled',
  'mfa.codes_locked',
  'team.user_created',
  'team.user_updated',
  'team.invitation_sent',
  'team.invitation_revoked',
  'team.invitation_accepted',
  'api_client.created',
  'api_client.rotated',
  'api_client.revoked',
  'api_client.adopted',
  'webhook_endpoint.created',
  'webhook_endpoint.updated',
  'webhook_endpoint.deleted',
  'webhook_endpoint.secret_rotated',
  'webhook_endpoint.pinged',
  'webhook_endpoint.redelivered',
  'verification_link.created',
  'verification_link.revoked',
  'wallet.adjusted',
  'topup.credited',
  'topup.refunded',
  'auto_topup.settings_changed',
  'auto_topup.declined',
  'organisation.settings_changed',
  'verification.requeried',
  'verification.slip_printed',
  'verification.face_matched',
  'batch.results_downloaded',
  'subject.exported',
  'subject.erased',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who did it: a user, an API client, the service itself (jobs, webhooks), an operator's command, or nobody known. */
export type AuditActor = `user:${number}` | `client:${string}` | 'system' | 'operator' | 'anonymous';

/** The actor of an authenticated caller (an API client or a user). */
export function actorOf(p: { userId: number | null; clientId: string | null }): AuditActor {
  if (p.clientId !== null) return `client:${p.clientId}`;
  if (p.userId !== null) return `user:${p.userId}`;
  return 'anonymous';
}
