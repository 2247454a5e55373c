import { randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { DatabasePool } from 'slonik';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import { dummyHash, verifyPassword } from '../../lib/passwords.ts';
import { isScope, SCOPES, type Scope } from '../../lib/api-scopes.ts';
import { CAPABILITY_REFUSALS, roles, type Capability } from '../../lib/roles.ts';
import { CLIENT_EXPIRED, checkClientCredentials, effectiveScopes, findUserById, findUserForLogin, type PrincipalRow } from '../organisations/index.ts';
import { CLIENT_SUBJECT, tokenClaims, type Principal, type TokenClaims } from './auth.schemas.ts';
import type { ScopeHolder } from './endpoint-scopes.ts';
import { jwtKeys } from './jwt-keys.ts';
import { failing } from '../../lib/rule.ts';
import { PRINCIPAL_ROW } from './admission.ts';
import { oauthError } from './token-errors.ts';

/** `secrets`: JWT_SECRETS, the signing one first (see jwt-keys.ts). */
export type TokenSettings = { secrets: readonly string[]; issuer: string; ttlSeconds: number };

export const ALGORITHM = 'HS256' as const;
const BAD_CREDENTIALS = 'Incorrect username or password';

/** The active user with these credentials, or null; the same cost whether or not the user exists. */
export async function checkCredentials(db: DatabasePool, username: string, password: string) {
  const user = await findUserForLogin(db, username.trim());
  // Always run one argon2 verification so an unknown username costs the same time as a wrong password.
  const ok = await verifyPassword(user?.password_hash ?? (await dummyHash()), password);
  if (!user || !ok || user.disabled || user.org_deleted) return null;
  return user;
}

const invalidScope = (detail: string) => oauthError('bad_request', 'invalid_scope', detail);

/**
 * The scopes a token request names (RFC 6749 section 3.3: space-delimited, order and repeats
 * meaningless), each a known one; undefined when it names none. Checked before the credentials: an
 * unknown scope is wrong whoever asks.
 */
export function requestedScopes(scope: string | undefined): Scope[] | undefined {
  if (scope === undefined) return undefined;
  const names = scope.split(' ').filter((s) => s !== '');
  if (names.length === 0) throw invalidScope('scope: name at least one scope, or leave it out for all that is allowed');
  for (const s of names) {
    if (!isScope(s)) throw invalidScope(`scope: unknown scope ${JSON.stringify(s).slice(0, 60)}; choose from ${SCOPES.join(', ')}`);
  }
  return SCOPES.filter((s) => names.includes(s));
}

/**
 * What a token is granted (RFC 6749 section 3.3): all that `allowed` holds when no scope was asked,
 * else exactly the scopes asked, every one of which must be allowed (`whose` names who may not have
 * it); in the scope table's order either way.
 */
export function grantedScopes(allowed: readonly Scope[], requested: readonly Scope[] | undefined, whose: string): Scope[] {
  if (requested === undefined) return SCOPES.filter((s) => allowed.includes(s));
  const beyond = requested.find((s) => !allowed.includes(s));
  if (beyond !== undefined) throw invalidScope(`scope: the scope ${beyond} is beyond ${whose}`);
  return [...requested];
}

/** `scope`: the scopes granted, in the answer always (RFC 6749 section 5.1); `claimed`, those the token carries. */
function issue(clock: Clock, tokens: TokenSettings, claims: Pick<TokenClaims, 'sub' | 'org' | 'role' | 'ver'>, scope: readonly Scope[], claimed: boolean) {
  const now = Math.floor(clock.now().getTime() / 1000);
  const { signing } = jwtKeys(tokens.secrets);
  const token = jwt.sign({ ...claims, ...(claimed ? { scope: scope.join(' ') } : {}), iat: now, nbf: now, exp: now + tokens.ttlSeconds, jti: randomUUID() }, signing.key, {
    algorithm: ALGORITHM,
    issuer: tokens.issuer,
    keyid: signing.kid,
  });
  return { access_token: token, token_type: 'bearer' as const, expires_in: tokens.ttlSeconds, scope: scope.join(' ') };
}

/**
 * A token for these credentials, or null. `secondFactor` runs once the password is proven, before
 * anything is issued; its false refuses the sign-in like a wrong password (the guard keeps the count).
 * `requested`: the scopes asked for, each within the user's role (else 400 invalid_scope, judged once
 * the sign-in is proven). The token carries them only when they are fewer than the role allows: a
 * token narrowed that way reaches what an API client with those scopes would (endpoint-scopes.ts).
 * Its `sessions_ended` (a recovery code was spent) means the user's token_version has just moved on:
 * the new token carries the new one, every earlier token is refused.
 */
export async function login(
  db: DatabasePool,
  clock: Clock,
  tokens: TokenSettings,
  username: string,
  password: string,
  secondFactor: (user: { id: number; orgId: number | null }) => Promise<boolean | 'sessions_ended'> = async () => true,
  requested?: readonly Scope[],
) {
  const user = await checkCredentials(db, username, password);
  const factor = user ? await secondFactor({ id: user.id, orgId: user.org_id }) : false;
  if (!user || !factor) return null;
  const allowed = roles.scopes(user.role);
  const scope = grantedScopes(allowed, requested, `the ${user.role} role`);
  const version = factor === 'sessions_ended' ? (await findUserById(db, user.id))?.token_version : user.token_version;
  if (version === undefined) return null;
  const answer = issue(clock, tokens, { sub: String(user.id), org: user.org_id, role: user.role, ver: version }, scope, scope.length < allowed.length);
  return { ...answer, ...(user.must_change_password ? { require_password_change: true as const } : {}), userId: user.id, orgId: user.org_id };
}

/**
 * OAuth 2.0 client credentials grant: a token for an organisation's API client, null for wrong
 * credentials, or `suspended` for right credentials of a client whose creator may no longer create it.
 * Expired or used from an address outside its list: a 401 naming why (checkClientCredentials).
 */
export async function loginClient(db: DatabasePool, clock: Clock, tokens: TokenSettings, clientId: string, clientSecret: string, address: string, requested?: readonly Scope[]) {
  const client = await checkClientCredentials(db, clientId, clientSecret, { address, now: clock.now() });
  if (!client) return null;
  if (client.suspended) return { suspended: true as const };
  const scope = grantedScopes(effectiveScopes(client), requested, 'the scopes of this API client');
  return { ...issue(clock, tokens, { sub: `${CLIENT_SUBJECT}${client.client_id}`, org: client.org_id, role: client.role, ver: client.token_version }, scope, true), clientId: client.client_id, orgId: client.org_id };
}

export const BAD_CLIENT_CREDENTIALS = 'Incorrect client credentials';

/** The `code` beside the detail of a 401 for a suspended API client (token grant and every request). */
export const API_CLIENT_SUSPENDED_CODE = 'api_client_suspended';
export const API_CLIENT_SUSPENDED =
  'API client suspended: the administrator who created it is disabled or no longer an organisation administrator; another administrator may adopt it or delete it';

export { BAD_CREDENTIALS };

type Refusal = { error: string; code?: string };
const INVALID: Refusal = { error: 'Could not validate credentials' };

/**
 * The token's claims, once passport-jwt has checked the signature, algorithm and issuer. Time
 * claims are checked here against the injectable clock.
 */
export function claimsOf(clock: Clock, payload: unknown, maxLifetimeSeconds: number): TokenClaims | Refusal {
  const parsed = tokenClaims.safeParse(payload);
  if (!parsed.success) return INVALID;
  const c = parsed.data;
  // We never issue longer-lived tokens; one that claims more was not made by this service's rules.
  if (c.exp - c.iat > maxLifetimeSeconds) return INVALID;
  const now = clock.now().getTime() / 1000;
  if (c.exp <= now) return { error: 'Token has expired' };
  if ((c.nbf ?? c.iat) > now + 5) return { error: 'Token is not yet valid' };
  if (!c.sub.startsWith(CLIENT_SUBJECT) && !Number.isSafeInteger(Number(c.sub))) return INVALID;
  return c;
}

/** Whose row the token's subject names: a user's id, or an API client's client_id. */
export function subjectOf(c: TokenClaims): { kind: 'user'; userId: number } | { kind: 'client'; clientId: string } {
  return c.sub.startsWith(CLIENT_SUBJECT) ? { kind: 'client', clientId: c.sub.slice(CLIENT_SUBJECT.length) } : { kind: 'user', userId: Number(c.sub) };
}

/**
 * Who holds the token's scopes, and which: an API client's token, those it carries or (issued before
 * scopes existed) its role's; a person's token, those it carries when narrowed, else null (its role decides).
 */
export function scopeHolder(c: TokenClaims): ScopeHolder {
  const client = subjectOf(c).kind === 'client';
  if (c.scope !== undefined) return { client, scopes: c.scope.split(' ').filter(isScope), role: c.role };
  return { client, scopes: client ? roles.scopes(c.role) : null, role: c.role };
}

/** The claims as the admission rules name them (admission.ts); a token without `ver` is of version 0. */
export const claimedFields = (c: TokenClaims) => ({ claimed_role: c.role, claimed_org: c.org, claimed_ver: c.ver ?? 0 });

/**
 * The principal a checked token stands for, given its user (or API client) as read by this very
 * request: a disabled user, a changed password (token_version), a changed role, a retired, suspended
 * or expired client or a retired organisation is refused here (a logged-out token by the deny-list).
 */
export function principalOfRow(clock: Clock, c: TokenClaims, row: PrincipalRow | null): Principal | Refusal {
  const token = { tokenId: c.jti, tokenExpiresAt: c.exp };
  // The rule the requery's statement also carries, compiled to SQL (admission.ts, auth/along.ts).
  const refused = failing(PRINCIPAL_ROW, { ...row, ...claimedFields(c), now: clock.now() });
  if (!row || refused === 'invalid') return INVALID;
  if (refused === 'suspended') return { error: API_CLIENT_SUSPENDED, code: API_CLIENT_SUSPENDED_CODE };
  if (refused === 'expired') return { error: CLIENT_EXPIRED };
  if ('client_id' in row) {
    return {
      userId: null,
      apiClientId: row.id,
      clientId: row.client_id,
      orgId: row.org_id,
      username: row.name,
      role: row.role,
      subscriptionActive: row.subscription_active,
      maxInFlight: row.max_in_flight,
      mustChangePassword: false,
      scopes: scopeHolder(c).scopes,
      allowedIps: row.allowed_ips,
      mfaEnrolmentRequired: false,
      ...token,
    };
  }
  return {
    userId: row.id,
    apiClientId: null,
    clientId: null,
    orgId: row.org_id,
    username: row.username,
    role: row.role,
    subscriptionActive: row.subscription_active ?? false,
    maxInFlight: row.max_in_flight,
    mustChangePassword: row.must_change_password,
    scopes: scopeHolder(c).scopes,
    allowedIps: null,
    mfaEnrolmentRequired: row.mfa_enrolment_required,
    ...token,
  };
}

/**
 * Called by passport-jwt after the signature, algorithm and issuer have been checked: the user (or
 * API client) is read on every request, by `read` (the requests that arrive together share one
 * statement, auth/along.ts). The deny-list is asked once the principal is admitted (the middleware),
 * in the same Redis call as the request's rate-limit counts.
 */
export async function principalFromClaims(
  clock: Clock,
  payload: unknown,
  maxLifetimeSeconds: number,
  read: (c: TokenClaims) => Promise<PrincipalRow | null>,
): Promise<Principal | Refusal> {
  const c = claimsOf(clock, payload, maxLifetimeSeconds);
  if ('error' in c) return c;
  return principalOfRow(clock, c, await read(c));
}

export const ORG_ADMINISTRATORS_ONLY = CAPABILITY_REFUSALS.administer_organisation;

export function requireOrgAdmin(p: Principal): number {
  return requireOrgCapability(p, 'administer_organisation');
}

/** The organisation of a principal whose role holds `capability` (roles.ts); else 403 with the capability's refusal. */
export function requireOrgCapability(p: Principal, capability: Capability): number {
  if (!roles.may(p.role, capability) || p.orgId === null) throw new AppError('forbidden', CAPABILITY_REFUSALS[capability]);
  return p.orgId;
}

/** The organisation's money (top-ups, invoices, statements, ledger, audit trail): administrators and the finance role. */
export function requireAccountsKeeper(p: Principal): number {
  return requireOrgCapability(p, 'keep_accounts');
}

/** Managing API clients and the team needs a person: an API client never manages credentials. */
export function requirePersonOrgAdmin(p: Principal): number {
  if (p.clientId !== null) throw new AppError('forbidden', 'API clients may not manage API clients or the team');
  return requireOrgAdmin(p);
}

export function requireOrgMember(p: Principal): number {
  if (p.orgId === null) throw new AppError('forbidden', 'This action needs an organisation account');
  return p.orgId;
}
