import { createHmac, createSecretKey } from 'node:crypto';
import type { Express } from 'express';
import { Redis } from 'ioredis';
import jwt from 'jsonwebtoken';
import pg from 'pg';
import { connectionString } from '../../src/lib/redis.ts';

/**
 * What both I/O floors share: the environment they are given, the HS256 check of the bearer token,
 * the one Redis EVALSHA of a fixed-window counter, and the server's start and stop. No code of the
 * service is used: the floors are the least work an honest server must do for these requests.
 * The service's tokens name their key (`kid` in the header, JWT_SECRETS rotation) and carry the
 * principal's token version (`ver`): the floor looks the key up by `kid`, as the service does, and
 * requires a `ver` (which the service then compares with the principal it reads; the floor has none).
 * Env: PORT, DATABASE_URL, REDIS_URL, REDIS_PREFIX, JWT_SECRET, JWT_ISSUER, POOL_SIZE, and
 * FLOOR_SAME_WRITES=1 for the floor that also makes the writes the service's contract requires of the
 * request (each floor says which), printed for information beside the floor the targets use.
 */
export const env = (name: string, fallback?: string): string => {
  const v = process.env[name] ?? fallback;
  if (v === undefined) throw new Error(`${name} is required`);
  return v;
};

export const SAME_WRITES = process.env.FLOOR_SAME_WRITES === '1';

export const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: Number(env('POOL_SIZE', '20')) });
const redis = new Redis(connectionString(env('REDIS_URL')), { enableOfflineQueue: true, maxRetriesPerRequest: 1 });
const prefix = env('REDIS_PREFIX');
const secret = env('JWT_SECRET');
// The service's key id of a secret: a keyed hash of a fixed label (src/modules/auth/jwt-keys.ts).
const keys = new Map([[createHmac('sha256', secret).update('idverify jwt key id').digest('base64url').slice(0, 12), createSecretKey(Buffer.from(secret, 'utf8'))]]);
const issuer = env('JWT_ISSUER', 'idverify');

// INCR, the window's expiry on the first hit, and the time left: one round trip, one script.
const WINDOW_SCRIPT = `
local c = redis.call('INCR', KEYS[1])
if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {c, redis.call('PTTL', KEYS[1])}`;
redis.defineCommand('floorWindow', { numberOfKeys: 1, lua: WINDOW_SCRIPT });

type Claims = { sub: string; org: number; jti: string; exp: number; ver?: number };

function headerKid(token: string): unknown {
  try {
    return (JSON.parse(Buffer.from(token.slice(0, token.indexOf('.')), 'base64url').toString('utf8')) as { kid?: unknown }).kid;
  } catch {
    return undefined;
  }
}

/** Verifies the bearer token and counts the request in its token's window; null when refused. */
export async function admit(authorization: string | undefined): Promise<Claims | null> {
  if (!authorization?.startsWith('Bearer ')) return null;
  const token = authorization.slice(7);
  const kid = headerKid(token);
  const key = typeof kid === 'string' ? keys.get(kid) : undefined;
  if (!key) return null;
  let claims: Claims;
  try {
    claims = jwt.verify(token, key, { algorithms: ['HS256'], issuer }) as Claims;
  } catch {
    return null;
  }
  if (typeof claims.ver !== 'number') return null;
  const [count] = (await (redis as unknown as { floorWindow(k: string, ms: number): Promise<[number, number]> }).floorWindow(`${prefix}:floor:${claims.jti}`, 60_000));
  return count <= 100_000_000 ? claims : null;
}

export function serve(app: Express): void {
  app.disable('x-powered-by');
  app.set('etag', false);
  const server = app.listen(Number(env('PORT', '0')), '127.0.0.1');
  server.keepAliveTimeout = 65_000;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      server.close();
      server.closeAllConnections();
      void Promise.allSettled([pool.end(), redis.quit()]).then(() => process.exit(0));
    });
  }
}
