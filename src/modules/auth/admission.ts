import { and, empty, eq, is, isNull, not, or, rule, when, after } from '../../lib/rule.ts';

/**
 * Principal admission, defined once (lib/rule.ts). Two rules because the code asks them at two
 * moments: PRINCIPAL_ROW when the token's user or API client has been read (principalOfRow: is this
 * row still the token's principal at `now`?), ADMISSION when a route admits that principal
 * (admissionError: a step it must take first, an API client's address list, the token's scope for
 * the route). The requery's statement carries both, compiled to SQL (auth/along.ts), so the audit
 * event it appends never admits a principal the code refuses.
 *
 * Fields: a row's own (`active`, `role`, `org_id`, `token_version`; an API client's `client_id`,
 * `suspended`, `expires_at`, `allowed_ips`; a person's `must_change_password`,
 * `mfa_enrolment_required`), the token's claims (`claimed_role`, `claimed_org`, `claimed_ver`), the
 * instant judged at (`now`), and what the route decides without the row: whether it lets a pending
 * step through (`password_pending`, `mfa_pending`), the token's scope for it (`may`), and whether the
 * caller's address is in the client's list (`address_allowed`, which a statement cannot know).
 */
const client = not(isNull('client_id'));

export const PRINCIPAL_ROW = rule({
  invalid: and(is('active'), eq('role', 'claimed_role'), eq('org_id', 'claimed_org'), eq('token_version', 'claimed_ver')),
  suspended: when(client, not(is('suspended'))),
  expired: when(client, or(isNull('expires_at'), after('expires_at', 'now'))),
});

export const ADMISSION = rule({
  password_change: or(is('password_pending'), not(is('must_change_password'))),
  mfa_enrolment: or(is('mfa_pending'), not(is('mfa_enrolment_required'))),
  address: when(client, or(empty('allowed_ips'), is('address_allowed'))),
  scope: is('may'),
});

/** The fields both rules read from a principal row. */
export const PRINCIPAL_FIELDS = ['active', 'role', 'org_id', 'token_version', 'client_id', 'suspended', 'expires_at', 'allowed_ips', 'must_change_password', 'mfa_enrolment_required'] as const;
export type AdmissionCheck = (typeof ADMISSION)[number]['name'];
