import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { addressAllowed, parseAddressEntry } from '../../lib/address-list.ts';
import { isScope, SCOPES, type Scope } from '../../lib/api-scopes.ts';
import { roles, type OrgRole } from '../../lib/roles.ts';
import { AppError } from '../../lib/errors.ts';
import { instantOf, INSTANT_RULE } from '../../lib/instant.ts';
import * as repo from './api-clients.repository.ts';
import { requireOrganisation } from './organisations.service.ts';
import { findApiClientForLogin } from './principals.ts';

export type { ApiClientRow, ListedApiClient } from './api-clients.repository.ts';

/**
 * The secret is 256 random bits, so a plain SHA-256 digest resists guessing as well as a slow hash
 * would, and a token request costs no argon2 run.
 */
const digest = (secret: string): Buffer => createHash('sha256').update(secret, 'utf8').digest();

/** `expiresAt` as the instant schema (lib/instant.ts) let it through. */
export type ApiClientLimits = { scopes?: readonly string[] | undefined; allowedIps?: readonly string[] | undefined; allowAny?: boolean | undefined; expiresAt?: string | undefined };

/** What the client may do: its own list, or (clients created before scopes existed) all its role allows. */
export function effectiveScopes(row: { scopes: readonly string[] | null; role: OrgRole }): Scope[] {
  return row.scopes ? row.scopes.filter(isScope) : roles.scopes(row.role);
}

/** Each refusal is a 400 naming the field: these are choices an administrator makes, not types. */
function checkedLimits(role: OrgRole, l: ApiClientLimits, now: Date) {
  const allowed = roles.scopes(role);
  const scopes = l.scopes === undefined ? allowed : [...new Set(l.scopes)];
  if (scopes.length === 0) throw new AppError('bad_request', 'scopes: name at least one scope, or leave it out for all the role allows');
  for (const s of scopes) {
    if (!isScope(s)) throw new AppError('bad_request', `scopes: unknown scope ${JSON.stringify(s).slice(0, 60)}; choose from ${SCOPES.join(', ')}`);
    if (!allowed.includes(s)) throw new AppError('bad_request', `scopes: the scope ${s} is beyond the ${role} role`);
  }
  const allowedIps = (l.allowedIps ?? []).map((text) => {
    const parsed = parseAddressEntry(text);
    if ('error' in parsed) throw new AppError('bad_request', `allowed_ips: ${parsed.error}`);
    // A list is there to narrow; one that lets every address in is most often a mistake (a /0 typed
    // for a /32), so it is taken only when said twice.
    if (parsed.everyAddress && !l.allowAny) throw new AppError('bad_request', `allowed_ips: ${JSON.stringify(text).slice(0, 60)} matches every address; set "allow_any": true if that is meant`);
    return parsed.entry;
  });
  let expiresAt: Date | null = null;
  if (l.expiresAt !== undefined) {
    expiresAt = instantOf(l.expiresAt);
    if (!expiresAt) throw new AppError('bad_request', `expires_at: ${INSTANT_RULE}`);
    if (expiresAt.getTime() <= now.getTime()) throw new AppError('bad_request', 'expires_at must be in the future');
  }
  return { scopes: scopes as Scope[], allowedIps: [...new Set(allowedIps)], expiresAt };
}

export async function createApiClient(
  db: DatabasePool,
  c: { orgId: number; name: string; role: OrgRole; createdBy: number | null; now: Date } & ApiClientLimits,
) {
  const limits = checkedLimits(c.role, c, c.now);
  await requireOrganisation(db, c.orgId);
  const clientSecret = randomBytes(32).toString('base64url');
  const row = await repo.insertApiClient(db, {
    clientId: `cli_${randomBytes(12).toString('hex')}`,
    orgId: c.orgId,
    name: c.name,
    role: c.role,
    secretHash: digest(clientSecret),
    createdBy: c.createdBy,
    ...limits,
  });
  return { ...row, client_secret: clientSecret };
}

export async function listApiClients(db: DatabasePool, orgId: number) {
  return repo.listApiClients(db, orgId);
}

/** The caller (an organisation administrator) becomes the client's creator: a suspended client acts again. */
export async function adoptApiClient(db: DatabasePool, orgId: number, clientId: string, userId: number) {
  const row = await repo.adoptApiClient(db, orgId, clientId, userId);
  if (!row) throw new AppError('not_found', 'API client not found');
  return row;
}

/** POST /api-clients/{id}/rotate: a fresh secret, shown once; the old secret and its tokens stop at once. */
export async function rotateApiClient(db: DatabasePool, orgId: number, clientId: string) {
  const clientSecret = randomBytes(32).toString('base64url');
  const row = await repo.rotateApiClientSecret(db, orgId, clientId, digest(clientSecret));
  if (!row) throw new AppError('not_found', 'API client not found');
  return { ...row, client_secret: clientSecret };
}

export async function retireApiClient(db: DatabasePool, orgId: number, clientId: string): Promise<void> {
  if (!(await repo.retireApiClient(db, orgId, clientId))) throw new AppError('not_found', 'API client not found');
}

// Compared against when the client id is unknown, so both failures cost the same.
const NO_SECRET = Buffer.alloc(32);

export const CLIENT_EXPIRED = 'This API client has expired';
export const ADDRESS_NOT_ALLOWED = 'This API client may not be used from this address';

/**
 * The active client with these credentials, or null. A suspended one (its creator disabled or
 * demoted) is returned with `suspended: true` only once its secret has proved right, and obtains
 * no token, so last_used_at is left as it was. A right secret from an address outside the client's
 * list, or after its expiry, is a 401 saying so: whoever holds the secret learns nothing they could
 * not guess, and the integrator learns what to fix.
 */
export async function checkClientCredentials(db: DatabasePool, clientId: string, clientSecret: string, from: { address: string; now: Date }) {
  const row = /^cli_[0-9a-f]{24}$/.test(clientId) ? await findApiClientForLogin(db, clientId) : null;
  const stored = row?.secret_hash.length === 32 ? row.secret_hash : NO_SECRET;
  const ok = timingSafeEqual(stored, digest(clientSecret));
  if (!row || !ok || !row.active) return null;
  if (row.expires_at !== null && new Date(row.expires_at).getTime() <= from.now.getTime()) throw new AppError('unauthorized', CLIENT_EXPIRED);
  if (!addressAllowed(row.allowed_ips, from.address)) throw new AppError('unauthorized', ADDRESS_NOT_ALLOWED);
  if (!row.suspended) await repo.touchApiClient(db, row.id);
  return row;
}
