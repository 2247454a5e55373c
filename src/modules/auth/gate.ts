import type { RedisClient } from '../../lib/redis.ts';

/**
 * The deny-list check and both rate-limit counters of a request in one Redis round trip. Each
 * separate command is a socket write in the API process and a wake-up of Redis; on the hot paths
 * (requery, fixture verifications) they were two of every three Redis calls.
 *
 * It runs once the principal has been read and admitted (the caller's job), so a request refused
 * for its principal (a disabled user, a fenced or retired API client, a pending password change)
 * counts against no limit, as when the limits ran after authentication; a revoked token counts
 * nothing either. The keys are the ones the separate calls use (the deny-list's
 * `auth:revoked:<jti>`, the rate limiter's `rl:token:<jti>` and `rl:org:<org>`), and each counter is
 * counted exactly as the rate limiter counts it (a fixed window opened by the first hit, `SET NX EX`
 * then `INCRBY`): a rolling upgrade shares counts and logouts between old and new processes.
 */
const SCRIPT = `
if redis.call('exists', KEYS[1]) == 1 then return {-1} end
local out = {}
for i = 2, #KEYS do
  redis.call('set', KEYS[i], 0, 'EX', ARGV[1], 'NX')
  local consumed = redis.call('incrby', KEYS[i], 1)
  local ttl = redis.call('pttl', KEYS[i])
  if ttl == -1 then
    redis.call('expire', KEYS[i], ARGV[1])
    ttl = 1000 * ARGV[1]
  end
  out[#out + 1] = consumed
  out[#out + 1] = ttl
end
return out
`;

/** A counter after this request: how many hits its window holds, and when the window ends. */
export type Count = { consumed: number; msBeforeNext: number };
export type Counted = { token: Count; org: Count | null };
/** `counted` is null when the caller asked for the deny-list alone (a route without rate limits). */
export type GateResult = { revoked: true } | { revoked: false; counted: Counted | null };
export type Gate = (jti: string, orgId: number | null, count: boolean) => Promise<GateResult>;

export type GateKeys = { revoked(jti: string): string; token(jti: string): string; org(orgId: number): string };

type WithGate = { idvGate(...args: (string | number)[]): Promise<number[]> };

/**
 * null on a Redis Cluster: there the three keys sit in different hash slots, which one script may
 * not touch, so a cluster keeps the separate calls (the deny-list read and two counters).
 */
export function redisGate(redis: RedisClient, keys: GateKeys, windowSeconds: number): Gate | null {
  if (redis.isCluster) return null;
  // defineCommand sends EVALSHA, and the script itself once when Redis answers NOSCRIPT.
  redis.defineCommand('idvGate', { lua: SCRIPT });
  const call = redis as unknown as WithGate;
  return async (jti, orgId, count) => {
    const names = [keys.revoked(jti)];
    if (count) names.push(keys.token(jti));
    if (count && orgId !== null) names.push(keys.org(orgId));
    const r = await call.idvGate(names.length, ...names, windowSeconds);
    if (r[0] === -1) return { revoked: true };
    if (!count) return { revoked: false, counted: null };
    return {
      revoked: false,
      counted: {
        token: { consumed: Number(r[0]), msBeforeNext: Number(r[1]) },
        org: orgId === null ? null : { consumed: Number(r[2]), msBeforeNext: Number(r[3]) },
      },
    };
  };
}
