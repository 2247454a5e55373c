import { createHmac, hkdfSync } from 'node:crypto';

/**
 * Turns a value that must not appear in clear in a Redis key name (a username, a client address)
 * into a keyed hash. HMAC-SHA256, not plain SHA-256: every IPv4 address, and most usernames, can be
 * hashed by anyone who reads Redis and matched against the key names; without the server's secret
 * they cannot. The key is derived from JWT_SECRET, which every API process shares, so all processes
 * name a counter alike; rotating the secret only restarts counters that live minutes anyway.
 */
export function keyNamer(secret: string): (value: string) => string {
  const key = Buffer.from(hkdfSync('sha256', secret, '', 'idverify redis key names', 32));
  return (value) => createHmac('sha256', key).update(value).digest('base64url').slice(0, 32);
}
