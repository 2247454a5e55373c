import type { RedisClient } from './redis.ts';

/**
 * Who gets the identity authority next, and who is refused at the door.
 *
 * Fairness: BullMQ's open edition has no job groups, so each live lookup is queued with priority k,
 * where k is its organisation's count of lookups in flight (itself included). An organisation's
 * first lookup in flight gets priority 1, its 300th priority 300; lower runs first. A burst from one
 * organisation therefore only ever queues behind its own earlier lookups, while another
 * organisation's next lookup takes the next free authority slot. Within one organisation, order is
 * by priority then arrival, which is close to first-in first-out.
 *
 * Admission: an organisation may have at most `cap` lookups in flight; and a lookup whose predicted
 * finish (the lookups ahead of it under this scheme, drained at the authority's rate, plus its own
 * call) falls past the caller's wait is refused at once rather than answered 504 later.
 *
 * State lives in Redis so that every API and worker process sees the same counts: one sorted set
 * per organisation (reference -> admitted-at), a set of organisations with lookups in flight, and a
 * running mean of lookup durations. Members are removed when their lookup settles; a member older
 * than `staleMs` (its job lost with a crashed worker and not yet re-run) stops counting, so the
 * counts heal by themselves. Keys share one hash tag so the scripts run on one Redis Cluster node.
 */

export type Admission =
  | { admitted: true; priority: number; ahead: number; meanLookupMs: number }
  | { admitted: false; reason: 'cap'; inFlight: number; meanLookupMs: number };

export type FairShare = {
  admit(o: { orgId: number; referenceId: string; cap: number }): Promise<Admission>;
  /** The lookup settled (any outcome) or was never queued; its duration feeds the running mean. */
  finish(o: { orgId: number; referenceId: string; durationMs?: number }): Promise<void>;
  /** Lookups in flight per organisation id (for tests, metrics and the benchmark). */
  snapshot(): Promise<Map<number, number>>;
};

// KEYS: orgs set, mean key. ARGV: key prefix for per-org sets, org, reference, now, stale-before, cap, default mean.
const ADMIT = `
local orgs, meanKey = KEYS[1], KEYS[2]
local prefix, org, ref = ARGV[1], ARGV[2], ARGV[3]
local now, staleBefore, cap = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local mean = tonumber(redis.call('GET', meanKey) or ARGV[7])
local own = prefix .. org
redis.call('ZREMRANGEBYSCORE', own, '-inf', staleBefore)
local c = redis.call('ZCARD', own)
if c >= cap then return {0, c, 0, mean} end
redis.call('ZADD', own, now, ref)
redis.call('SADD', orgs, org)
local k = c + 1
local ahead = c
for _, o in ipairs(redis.call('SMEMBERS', orgs)) do
  if o ~= org then
    local key = prefix .. o
    redis.call('ZREMRANGEBYSCORE', key, '-inf', staleBefore)
    local n = redis.call('ZCARD', key)
    if n == 0 then redis.call('SREM', orgs, o) else ahead = ahead + math.min(n, k) end
  end
end
return {1, k, ahead, mean}
`;

// KEYS: orgs set, mean key, the org's set. ARGV: org, reference, duration ms or -1, smoothing.
const FINISH = `
redis.call('ZREM', KEYS[3], ARGV[2])
if redis.call('ZCARD', KEYS[3]) == 0 then redis.call('SREM', KEYS[1], ARGV[1]) end
local d = tonumber(ARGV[3])
if d >= 0 then
  local m = tonumber(redis.call('GET', KEYS[2]) or ARGV[3])
  redis.call('SET', KEYS[2], tostring(m + tonumber(ARGV[4]) * (d - m)))
end
return 0
`;

const SMOOTHING = 0.05;

export function createFairShare(redis: RedisClient, o: { prefix: string; staleMs: number; defaultLookupMs: number }): FairShare {
  const tag = `${o.prefix}:{authority}`;
  const orgsKey = `${tag}:orgs`;
  const meanKey = `${tag}:lookup-ms`;
  const orgPrefix = `${tag}:inflight:`;
  return {
    async admit({ orgId, referenceId, cap }) {
      const now = Date.now();
      const r = (await redis.eval(
        ADMIT,
        2,
        orgsKey,
        meanKey,
        orgPrefix,
        String(orgId),
        referenceId,
        String(now),
        String(now - o.staleMs),
        String(cap),
        String(o.defaultLookupMs),
      )) as [number, number, number, string | number];
      const meanLookupMs = Number(r[3]);
      if (r[0] === 0) return { admitted: false, reason: 'cap', inFlight: r[1], meanLookupMs };
      return { admitted: true, priority: r[1], ahead: r[2], meanLookupMs };
    },
    async finish({ orgId, referenceId, durationMs }) {
      await redis.eval(FINISH, 3, orgsKey, meanKey, `${orgPrefix}${orgId}`, String(orgId), referenceId, String(durationMs ?? -1), String(SMOOTHING));
    },
    async snapshot() {
      const out = new Map<number, number>();
      for (const org of await redis.smembers(orgsKey)) out.set(Number(org), await redis.zcard(`${orgPrefix}${org}`));
      return out;
    },
  };
}

/**
 * When a newly admitted lookup is expected to finish: the lookups ahead of it beyond the free
 * authority slots drain at the authority's rate (slots / mean duration, or the calls-per-second
 * limit if lower), then its own call takes a mean duration.
 */
export function predictedFinishMs(a: { ahead: number; meanLookupMs: number }, limits: { maxConcurrency: number; maxRps: number }): number {
  const mean = Math.max(1, a.meanLookupMs);
  const bySlots = limits.maxConcurrency / (mean / 1000);
  const perSecond = limits.maxRps > 0 ? Math.min(bySlots, limits.maxRps) : bySlots;
  const queued = Math.max(0, a.ahead - limits.maxConcurrency + 1);
  return (queued / perSecond) * 1000 + mean;
}
