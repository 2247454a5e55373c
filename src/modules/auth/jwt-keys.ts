import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';

/** JWT_SECRETS as the token code sees it: the first signs, every one verifies. */
export type JwtKeys = { signing: { kid: string; key: KeyObject }; byKid: Map<string, KeyObject>; all: KeyObject[] };

/**
 * The key id names a secret without revealing it: a keyed hash of a fixed label, so two secrets
 * never share an id and the id tells nothing about the secret.
 */
export function keyIdOf(secret: string): string {
  return createHmac('sha256', secret).update('idverify jwt key id').digest('base64url').slice(0, 12);
}

const cache = new Map<string, JwtKeys>();

/**
 * Built once per list: given a string, jsonwebtoken first tries to parse it as a public key on every
 * call (and throws and catches), which costs CPU on every request; a KeyObject does not.
 */
export function jwtKeys(secrets: readonly string[]): JwtKeys {
  const cacheKey = secrets.join('\n');
  let keys = cache.get(cacheKey);
  if (!keys) {
    if (secrets.length === 0) throw new Error('no JWT secret configured');
    const entries = secrets.map((s) => [keyIdOf(s), createSecretKey(Buffer.from(s, 'utf8'))] as const);
    keys = { signing: { kid: entries[0]![0], key: entries[0]![1] }, byKid: new Map(entries), all: entries.map(([, k]) => k) };
    cache.set(cacheKey, keys);
  }
  return keys;
}

/** The `kid` of a compact JWS's header, or undefined; null when the header is not JSON. */
export function headerKid(token: string): string | undefined | null {
  const dot = token.indexOf('.');
  if (dot <= 0) return null;
  try {
    const header = JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8')) as unknown;
    if (!header || typeof header !== 'object') return null;
    const kid = (header as { kid?: unknown }).kid;
    return typeof kid === 'string' ? kid : kid === undefined ? undefined : null;
  } catch {
    return null;
  }
}
