/**
 * What an API client may do, one scope per family of endpoints (the table that maps each endpoint to
 * its scope is the auth module's). Shared by the organisations module, which stores a client's scopes,
 * and the auth module, which enforces them.
 */
export const SCOPES = ['verify', 'requery', 'history:read', 'topup'] as const;
export type Scope = (typeof SCOPES)[number];

/** Everything a role allows: topping up spends the organisation's money, so only administrators. */
export function roleScopes(role: 'org_admin' | 'member'): Scope[] {
  return role === 'org_admin' ? [...SCOPES] : SCOPES.filter((s) => s !== 'topup');
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
