import { batcher } from '../../lib/batch.ts';
import { COUNT_LUA, fixedWindows, type Taken, type WindowCount } from '../../lib/fixed-window.ts';
import type { RedisClient } from '../../lib/redis.ts';

/**
 * The deny-list check and both rate-limit counters of a request in one Redis round trip. Each
 * separate command is a socket write in the API process and a wake-up of Redis; on the hot paths
 * (requery, fixture verifications) they were two of every three Redis calls. The requests that
 * arrive while one call is under way share the next (lib/batch.ts, up to 64): one script call for
 * all of them, each request's part run in arrival order, exactly as its own call would have run.
 * Each request is still counted by a call that starts after it arrived.
 *
 * It runs once the principal has been read and admitted (the caller's job), so a request refused
 * for its principal (a disabled user, a fenced or retired API client, a pending password change)
 * counts against no limit, as when the limits ran after authentication; a revoked token counts
 * nothing either. (The requery asks it before its read, and gives the counts back when it then
 * refuses the principal: see redisGiveBack.) The keys are the ones the separate calls use (the
 * deny-list's `auth:revoked:<jti>`, the rate limiter's `rl:token:<jti>` and `rl:org:<org>`), and each
 * counter is counted exactly as the rate limiter counts it (lib/fixed-window.ts: a fixed window opened
 * by the first hit, `SET NX EX` then `INCRBY`): a rolling upgrade shares counts and logouts between
 * old and new processes.
 *
 * ARGV: the window in seconds, then for each request the number of its keys (its deny-list key,
 * then its counters). The answer, per request: -1 when its token is revoked (nothing counted), or
 * the number of its counters followed by each counter's count, time left in ms and window identity.
 */
const SCRIPT = `${COUNT_LUA}
local out = {}
local k = 1
for r = 2, #ARGV do
  local n = tonumber(ARGV[r])
  if redis.call('exists', KEYS[k]) == 1 then
    out[#out + 1] = -1
  else
    out[#out + 1] = n - 1
    for i = k + 1, k + n - 1 do
      local consumed, ttl, window = count(KEYS[i], ARGV[1])
      out[#out + 1] = consumed
      out[#out + 1] = ttl
      out[#out + 1] = window
    end
  end
  k = k + n
end
return out
`;

/** A counter after this request: how many hits its window holds, when it ends, and which window it is (for a give-back). */
export type Count = WindowCount;
export type Counted = { token: Count; org: Count | null };
/** `counted` is null when the caller asked for the deny-list alone (a route without rate limits). */
export type GateResult = { revoked: true } | { revoked: false; counted: Counted | null };
export type Gate = (jti: string, orgId: number | null, count: boolean) => Promise<GateResult>;

export type GateKeys = { revoked(jti: string): string; token(jti: string): string; org(orgId: number): string };

type WithGate = { idvGate(...args: (string | number)[]): Promise<number[]> };
type Asked = { jti: string; orgId: number | null; count: boolean };

/**
 * null on a Redis Cluster: there the three keys sit in different hash slots, which one script may
 * not touch, so a cluster keeps the separate calls (the deny-list read and two counters).
 */
export function redisGate(redis: RedisClient, keys: GateKeys, windowSeconds: number): Gate | null {
  if (redis.isCluster) return null;
  // defineCommand sends EVALSHA, and the script itself once when Redis answers NOSCRIPT.
  redis.defineCommand('idvGate', { lua: SCRIPT });
  const call = redis as unknown as WithGate;
  const namesOf = (a: Asked) => [keys.revoked(a.jti), ...(a.count ? [keys.token(a.jti)] : []), ...(a.count && a.orgId !== null ? [keys.org(a.orgId)] : [])];
  const ask = batcher({
    maxBatch: 64,
    run: async (batch: Asked[]) => {
      const names = batch.map(namesOf);
      const out = await call.idvGate(names.reduce((n, k) => n + k.length, 0), ...names.flat(), windowSeconds, ...names.map((k) => k.length));
      const results: GateResult[] = [];
      let at = 0;
      for (const a of batch) {
        const head = Number(out[at++]);
        if (head === -1) {
          results.push({ revoked: true });
          continue;
        }
        const counts: Count[] = [];
        for (let i = 0; i < head; i++, at += 3) counts.push({ consumed: Number(out[at]), msBeforeNext: Number(out[at + 1]), window: Number(out[at + 2]) });
        results.push({ revoked: false, counted: a.count ? { token: counts[0]!, org: counts[1] ?? null } : null });
      }
      if (at !== out.length) throw new Error('gate: the script did not answer every request');
      return results;
    },
  });
  return (jti, orgId, count) => ask({ jti, orgId, count });
}

/**
 * Takes back the counts a request's early gate call took (a requery counts before it reads, so that
 * its read can record its audit event; a request then refused for its principal, or over a limit,
 * counts against no limit, as on every other route). Each counter is lowered only while it is still
 * the window the early call counted in (the identity that call answered, lib/fixed-window.ts): a
 * window opened since by another request is left alone, however late the give-back. One round trip,
 * on refusals only.
 */
export type GiveBack = (jti: string, orgId: number | null, counted: Counted) => Promise<void>;

/** null on a Redis Cluster, like the gate itself (whose counts it gives back). */
export function redisGiveBack(redis: RedisClient, keys: GateKeys): GiveBack | null {
  if (redis.isCluster) return null;
  const windows = fixedWindows(redis);
  return async (jti, orgId, counted) => {
    const taken: Taken[] = [{ key: keys.token(jti), window: counted.token.window }];
    if (orgId !== null && counted.org !== null) taken.push({ key: keys.org(orgId), window: counted.org.window });
    await windows.giveBack(taken);
  };
}
