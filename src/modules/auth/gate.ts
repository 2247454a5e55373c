import { batcher } from '../../lib/batch.ts';
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
 * refuses the principal: see GIVE_BACK.) The keys are the ones the separate calls use (the
 * deny-list's `auth:revoked:<jti>`, the rate limiter's `rl:token:<jti>` and `rl:org:<org>`), and each
 * counter is counted exactly as the rate limiter counts it (a fixed window opened by the first hit,
 * `SET NX EX` then `INCRBY`): a rolling upgrade shares counts and logouts between old and new processes.
 *
 * ARGV: the window in seconds, then for each request the number of its keys (its deny-list key,
 * then its counters). The answer, per request: -1 when its token is revoked (nothing counted), or
 * the number of its counters followed by each counter's count and time left in ms.
 */
const SCRIPT = `
local out = {}
local k = 1
for r = 2, #ARGV do
  local n = tonumber(ARGV[r])
  if redis.call('exists', KEYS[k]) == 1 then
    out[#out + 1] = -1
  else
    out[#out + 1] = n - 1
    for i = k + 1, k + n - 1 do
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
  end
  k = k + n
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
        for (let i = 0; i < head; i++, at += 2) counts.push({ consumed: Number(out[at]), msBeforeNext: Number(out[at + 1]) });
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
 * counts against no limit, as on every other route). A counter is lowered only while it holds a
 * count and is still the window that was counted (its time left no later than that window's end,
 * give or take 50 ms, as the ends are measured after the count): a window opened since by another
 * request, however short the window, is left alone. One round trip,
 * on refusals only.
 */
const GIVE_BACK = `
for i = 1, #KEYS do
  local v = tonumber(redis.call('get', KEYS[i]) or '0')
  local left = redis.call('pttl', KEYS[i])
  if v and v > 0 and left > 0 and left <= tonumber(ARGV[i]) + 50 then redis.call('decrby', KEYS[i], 1) end
end
return 0
`;

/** `ends`: when each counted window ends (epoch ms), as the early call saw it. */
export type GiveBack = (jti: string, orgId: number | null, ends: { token: number; org: number | null }) => Promise<void>;

type WithGiveBack = { idvGiveBack(...args: (string | number)[]): Promise<number> };

/** null on a Redis Cluster, like the gate itself (whose counts it gives back). */
export function redisGiveBack(redis: RedisClient, keys: GateKeys): GiveBack | null {
  if (redis.isCluster) return null;
  redis.defineCommand('idvGiveBack', { lua: GIVE_BACK });
  const call = redis as unknown as WithGiveBack;
  return async (jti, orgId, ends) => {
    const now = Date.now();
    const names = [keys.token(jti)];
    const left = [ends.token - now];
    if (orgId !== null && ends.org !== null) {
      names.push(keys.org(orgId));
      left.push(ends.org - now);
    }
    await call.idvGiveBack(names.length, ...names, ...left);
  };
}
