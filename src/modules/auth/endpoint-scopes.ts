import type { Scope } from '../../lib/api-scopes.ts';
import { roles } from '../../lib/roles.ts';

/**
 * Every endpoint an API client's token may reach, with the scope it needs, in one table: `null`
 * needs no scope (who am I, reference lists), `person` is refused to every client by the endpoint
 * itself (team, API clients, settings, passwords, two-factor sign-in). An endpoint missing here is
 * refused to API clients: a new endpoint stays closed to them until it is given a row.
 * Keys are the method and the route pattern as the router declares it (without /v1).
 */
export const ENDPOINT_SCOPES: Readonly<Record<string, Scope | null | 'person'>> = Object.freeze({
  'POST /verify-nin': 'verify',
  'POST /verify-nin/phone': 'verify',
  'POST /verify-nin/demography': 'verify',
  'POST /verify-nin/match': 'verify',
  'POST /verify-nin/face': 'verify',
  'POST /verify-nin/vnin': 'verify',
  'POST /liveness/sessions': 'verify',
  'GET /liveness/sessions/:id': 'verify',
  'GET /verify-nin/vnin/instructions': null,
  'POST /verify-nin/requery': 'requery',
  'POST /verify-nin/batches': 'verify',
  'GET /verify-nin/batches': 'history:read',
  'GET /verify-nin/batches/:id': 'history:read',
  'GET /verify-nin/batches/:id/results': 'requery',
  'POST /verify-nin/batches/:id/cancel': 'verify',
  'GET /verify-nin/slip/:reference_id': 'requery',
  'GET /verifications': 'history:read',
  'GET /verifications/:reference_id/receipt': 'history:read',
  'GET /transactions': 'history:read',
  'GET /topups': 'history:read',
  'GET /topups/:reference': 'history:read',
  'GET /topups/:reference/invoice': 'history:read',
  'GET /audit-events': 'history:read',
  'POST /topup/initialize': 'topup',
  'POST /topup/verify': 'topup',
  'GET /topup/quote': 'topup',
  'GET /usage/daily': 'history:read',
  'POST /webhook-endpoints': 'webhooks',
  'GET /webhook-endpoints': 'webhooks',
  'GET /webhook-endpoints/:id': 'webhooks',
  'PATCH /webhook-endpoints/:id': 'webhooks',
  'DELETE /webhook-endpoints/:id': 'webhooks',
  'POST /webhook-endpoints/:id/rotate-secret': 'webhooks',
  'POST /webhook-endpoints/:id/test': 'webhooks',
  'GET /webhook-endpoints/:id/deliveries': 'webhooks',
  'POST /webhook-endpoints/deliveries/:delivery_id/redeliver': 'webhooks',
  'POST /verification-links': 'links',
  'GET /verification-links': 'links',
  'GET /verification-links/:id': 'links',
  'POST /verification-links/:id/revoke': 'links',
  'GET /statements/:month': 'history:read',
  'GET /me': null,
  'GET /meorganisation': null,
  'GET /me/organisation': null,
  'GET /nimc-reasons': null,
  'GET /upstream-reasons': null,
  'POST /logout': null,
  'POST /change-password': 'person',
  'GET /team': 'person',
  'POST /team': 'person',
  'PATCH /team/:id': 'person',
  'POST /team/invitations': 'person',
  'GET /team/invitations': 'person',
  'DELETE /team/invitations/:id': 'person',
  'POST /api-clients': 'person',
  'GET /api-clients': 'person',
  'DELETE /api-clients/:client_id': 'person',
  'POST /api-clients/:client_id/adopt': 'person',
  'POST /api-clients/:client_id/rotate': 'person',
  'PATCH /me/organisation': 'person',
  'GET /settings/auto-topup': 'person',
  'PUT /settings/auto-topup': 'person',
  'POST /me/mfa/totp': 'person',
  'POST /me/mfa/totp/confirm': 'person',
  'DELETE /me/mfa/totp': 'person',
  'GET /platform/organisations': 'person',
  'GET /platform/organisations/:id': 'person',
});

export type ScopeCheck = { ok: true } | { ok: false; scope: Scope | null };

/**
 * Who holds the scopes: an API client's token (always scoped), or a person's token, scoped only when
 * it was narrowed at the token endpoint (`scopes` null: its role's scopes, and every endpoint a person
 * may call).
 */
export type ScopeHolder = { client: boolean; scopes: readonly Scope[] | null; role: string };

/**
 * Whether a token may call this route; the refused scope, or null when the route is closed to it. A
 * person's narrowed token reaches what an API client with the same scopes reaches, and no more: not
 * the person-only endpoints (which refuse a client themselves), so that a narrowed token cannot mint
 * a wider credential (an API client, a team member) or change the account.
 */
export function checkScope(method: string, routePath: string | undefined, holder: ScopeHolder): ScopeCheck {
  const key = `${method.toUpperCase()} ${routePath ?? ''}`;
  if (!holder.client && holder.scopes === null) {
    // A person's token as issued: what the role allows (roles.ts), so a role without a scope is refused
    // its endpoints here too, not only by each route's own guard; the person-only endpoints, and those
    // the table does not name (the platform's), are the routes' to judge.
    const needed = Object.hasOwn(ENDPOINT_SCOPES, key) ? ENDPOINT_SCOPES[key] : null;
    if (needed === null || needed === undefined || needed === 'person') return { ok: true };
    return roles.scopes(holder.role).includes(needed) ? { ok: true } : { ok: false, scope: needed };
  }
  if (!Object.hasOwn(ENDPOINT_SCOPES, key)) return { ok: false, scope: null };
  const needed = ENDPOINT_SCOPES[key];
  if (needed === null || needed === undefined) return { ok: true };
  if (needed === 'person') return holder.client ? { ok: true } : { ok: false, scope: null };
  return (holder.scopes ?? []).includes(needed) ? { ok: true } : { ok: false, scope: needed };
}
