import { createSecretKey, randomUUID, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { DatabasePool } from 'slonik';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import { dummyHash, verifyPassword } from '../../lib/passwords.ts';
import { checkClientCredentials, findClientPrincipal, findPrincipal, findUserForLogin } from '../organisations/index.ts';
import { CLIENT_SUBJECT, tokenClaims, type Principal, type TokenClaims } from './auth.schemas.ts';
import type { Revocations } from './revocations.ts';

export type TokenSettings = { secret: string; issuer: string; ttlSeconds: number };

const keys = new Map<string, KeyObject>();
/**
 * The HMAC key as a KeyObject, built once: given a string, jsonwebtoken first tries to parse it as a
 * public key on every call (and throws and catches), which costs CPU on every request.
 */
export function signingKey(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    key = createSecretKey(Buffer.from(secret, 'utf8'));
    keys.set(secret, key);
  }
  return key;
}

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

function issue(clock: Clock, tokens: TokenSettings, claims: Pick<TokenClaims, 'sub' | 'org' | 'role' | 'ver'>) {
  const now = Math.floor(clock.now().getTime() / 1000);
  const token = jwt.sign({ ...claims, iat: now, nbf: now, exp: now + tokens.ttlSeconds, jti: randomUUID() }, signingKey(tokens.secret), {
    algorithm: ALGORITHM,
    issuer: tokens.issuer,
  });
  return { access_token: token, token_type: 'bearer' as const, expires_in: tokens.ttlSeconds };
}

export async function login(db: DatabasePool, clock: Clock, tokens: TokenSettings, username: string, password: string) {
  const user = await checkCredentials(db, username, password);
  if (!user) return null;
  const answer = issue(clock, tokens, { sub: String(user.id), org: user.org_id, role: user.role, ver: user.token_version });
  return { ...answer, ...(user.must_change_password ? { require_password_change: true as const } : {}), userId: user.id };
}

/** OAuth 2.0 client credentials grant: a token for an organisation's API client, or null. */
export async function loginClient(db: DatabasePool, clock: Clock, tokens: TokenSettings, clientId: string, clientSecret: string) {
  const client = await checkClientCredentials(db, clientId, clientSecret);
  if (!client) return null;
  return issue(clock, tokens, { sub: `${CLIENT_SUBJECT}${client.client_id}`, org: client.org_id, role: client.role });
}

export const BAD_CLIENT_CREDENTIALS = 'Incorrect client credentials';

export { BAD_CREDENTIALS };

/**
 * Called by passport-jwt after the signature, algorithm and issuer have been checked. Time claims
 * are checked here against the injectable clock; the user (or API client) is read on every request
 * so a disabled user, a changed password (token_version), a retired client or organisation, or a
 * logged-out token (the deny-list) loses access at once.
 */
export async function principalFromClaims(
  db: DatabasePool,
  clock: Clock,
  revocations: Revocations,
  payload: unknown,
  maxLifetimeSeconds: number,
): Promise<Principal | { error: string }> {
  const parsed = tokenClaims.safeParse(payload);
  if (!parsed.success) return { error: 'Could not validate credentials' };
  const c = parsed.data;
  // We never issue longer-lived tokens; one that claims more was not made by this service's rules.
  if (c.exp - c.iat > maxLifetimeSeconds) return { error: 'Could not validate credentials' };
  const now = clock.now().getTime() / 1000;
  if (c.exp <= now) return { error: 'Token has expired' };
  if ((c.nbf ?? c.iat) > now + 5) return { error: 'Token is not yet valid' };
  const invalid = { error: 'Could not validate credentials' };
  const token = { tokenId: c.jti, tokenExpiresAt: c.exp };
  if (c.sub.startsWith(CLIENT_SUBJECT)) {
    const [p, revoked] = await Promise.all([findClientPrincipal(db, c.sub.slice(CLIENT_SUBJECT.length)), revocations.isRevoked(c.jti)]);
    if (!p || !p.active || revoked || p.role !== c.role || p.org_id !== c.org) return invalid;
    return {
      userId: null,
      apiClientId: p.id,
      clientId: p.client_id,
      orgId: p.org_id,
      username: p.name,
      role: p.role,
      subscriptionActive: p.subscription_active,
      maxInFlight: p.max_in_flight,
      mustChangePassword: false,
      ...token,
    };
  }
  const userId = Number(c.sub);
  if (!Number.isSafeInteger(userId)) return invalid;
  // Both lookups at once: the deny-list costs no extra latency on the hot path.
  const [p, revoked] = await Promise.all([findPrincipal(db, userId), revocations.isRevoked(c.jti)]);
  if (!p || !p.active || revoked || p.role !== c.role || p.org_id !== c.org || p.token_version !== (c.ver ?? 0)) return invalid;
  return {
    userId: p.id,
    apiClientId: null,
    clientId: null,
    orgId: p.org_id,
    username: p.username,
    role: p.role,
    subscriptionActive: p.subscription_active ?? false,
    maxInFlight: p.max_in_flight,
    mustChangePassword: p.must_change_password,
    ...token,
  };
}

export function requireOrgAdmin(p: Principal): number {
  if (p.role !== 'org_admin' || p.orgId === null) throw new AppError('forbidden', 'Only organisation administrators may do this');
  return p.orgId;
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
