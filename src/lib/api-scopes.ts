/**
 * What a token may do, one scope per family of endpoints (the table that maps each endpoint to its
 * scope is the auth module's), each with the words the OpenAPI document shows for it. Shared by the
 * organisations module, which stores a client's scopes, the auth module, which grants and enforces
 * them, and the document's OAuth 2.0 flows.
 */
export const SCOPE_DESCRIPTIONS = {
  verify: 'Live NIN lookups (by NIN, phone, demography, match, vNIN) and CSV batches: submit and cancel',
  requery: 'Read back a past verification by its reference_id (requery, slip, batch results); free',
  'history:read': 'Read the lists: verifications, transactions, top-ups, batches, daily usage, audit events',
  topup: "Buy units for the organisation's wallet (organisation administrators and the finance role only)",
  webhooks: "Manage the organisation's webhook endpoints and read their deliveries (organisation administrators only)",
  links: 'Make, list and revoke verification links, and read their submissions (organisation administrators only)',
} as const;
export type Scope = keyof typeof SCOPE_DESCRIPTIONS;
export const SCOPES = Object.keys(SCOPE_DESCRIPTIONS) as readonly Scope[];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
