import { createSecretKey, randomUUID, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { DatabasePool } from 'slonik';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import { findPrincipal, findUserForLogin } from '../organisations/organisations.service.ts';
import { dummyHash, verifyPassword } from './passwords.ts';
import { tokenClaims, type Principal } from './auth.schemas.ts';

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

export async function login(db: DatabasePool, clock: Clock, tokens: TokenSettings, username: string, password: string) {
  const user = await checkCredentials(db, username, password);
  if (!user) return null;
  const now = Math.floor(clock.now().getTime() / 1000);
  const claims = { sub: String(user.id), org: user.org_id, role: user.role, iat: now, nbf: now, exp: now + tokens.ttlSeconds, jti: randomUUID() };
  const token = jwt.sign(claims, signingKey(tokens.secret), { algorithm: ALGORITHM, issuer: tokens.issuer });
  return { access_token: token, token_type: 'bearer' as const, expires_in: tokens.ttlSeconds, userId: user.id };
}

export { BAD_CREDENTIALS };

/**
 * Called by passport-jwt after the signature, algorithm and issuer have been checked. Time claims
 * are checked here against the injectable clock; the user is read on every request so a disabled
 * user or a retired organisation loses access at once.
 */
export async function principalFromClaims(db: DatabasePool, clock: Clock, payload: unknown): Promise<Principal | { error: string }> {
  const parsed = tokenClaims.safeParse(payload);
  if (!parsed.success) return { error: 'Could not validate credentials' };
  const c = parsed.data;
  const now = clock.now().getTime() / 1000;
  if (c.exp <= now) return { error: 'Token has expired' };
  if ((c.nbf ?? c.iat) > now + 5) return { error: 'Token is not yet valid' };
  const userId = Number(c.sub);
  if (!Number.isSafeInteger(userId)) return { error: 'Could not validate credentials' };
  const p = await findPrincipal(db, userId);
  if (!p || !p.active || p.role !== c.role || p.org_id !== c.org) return { error: 'Could not validate credentials' };
  return {
    userId: p.id,
    orgId: p.org_id,
    username: p.username,
    role: p.role,
    subscriptionActive: p.subscription_active ?? false,
    tokenId: c.jti,
  };
}

export function requireOrgAdmin(p: Principal): number {
  if (p.role !== 'org_admin' || p.orgId === null) throw new AppError('forbidden', 'Only organisation administrators may do this');
  return p.orgId;
}

export function requireOrgMember(p: Principal): number {
  if (p.orgId === null) throw new AppError('forbidden', 'This action needs an organisation account');
  return p.orgId;
}
