import type { Admission, FairShare } from '../../context.ts';
import { defineScript, type RedisClient } from '../../lib/redis.ts';

/**
 * Who gets the identity authority next, and who is refused at the door.
 *
 * Fairness: BullMQ's open edition has no job groups, so each live lookup is queued with a priority
 * (lower runs first) that is its tag under start-time fair queuing. An organisation's lookups are
 * tagged one after the other (its last tag + 1), so they run first-in first-out among themselves; an
 * organisation with nothing in flight starts just above the virtual time, the highest tag of a
 * lookup that has started (workers report each start), and so does one whose own tags fell behind
 * it: nobody banks credit by keeping a trickle in flight. A newcomer's first lookup therefore takes the next free authority slot, and from
 * then on organisations with work waiting take turns, one lookup each, however much each has queued.
 * A lookup refused after admission gives its tag back. When nothing is in flight at all the tags
 * start again from 1; a synchronous tag never exceeds SYNC_MAX_TAG (2^20 - 1: after that many
 * lookups without the queue ever emptying, the order becomes first-in first-out until it does). The
 * priorities above it, up to BullMQ's largest (2^21 - 1), belong to asynchronous and batch lookups
 * (the background lane), which therefore run only when no synchronous lookup waits.
 *
 * Admission: an organisation may have at most `cap` lookups in flight; and a lookup whose predicted
 * finish (the lookups ahead of it under this scheme, drained at the authority's rate, plus its own
 * call) falls past the caller's wait is refused at once rather than answered 504 later.
 *
 * State lives in Redis so that every API and worker process sees the same counts: one sorted set
 * per organisation (reference -> admitted-at), a set of organisations with lookups in flight, each
 * one's last tag, and a running mean of lookup durations. Members are removed when their lookup settles; a member older
 * than `staleMs` (its job lost with a crashed worker and not yet re-run) stops counting, so the
 * counts heal by themselves. Keys share one hash tag so the scripts run on one Redis Cluster node.
 */

/** Synchronous lookups' tags run 1 .. SYNC_MAX_TAG; the background lane's priorities sit above. */
export const SYNC_MAX_TAG = 2 ** 20 - 1;

export function isBackgroundPriority(priority: number): boolean {
  return priority > SYNC_MAX_TAG;
}

// KEYS: orgs set, mean key, tags hash. ARGV: key prefix for per-org sets, org, reference, now,
// stale-before, cap, default mean, highest tag, the channel told the lane's count of lookups in
// flight ('' for none). The tags hash holds each organisation's last tag and,
// under "_v", the virtual time: the highest tag of a lookup that has started.
const ADMIT = `
local orgs, meanKey, tags = KEYS[1], KEYS[2], KEYS[3]
local prefix, org, ref = ARGV[1], ARGV[2], ARGV[3]
local now, staleBefore, cap, maxTag = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[8])
local mean = tonumber(redis.call('GET', meanKey) or ARGV[7])
local own = prefix .. org
redis.call('ZREMRANGEBYSCORE', own, '-inf', staleBefore)
local c = redis.call('ZCARD', own)
if c >= cap then return {0, c, 0, mean} end
-- The other organisations in flight: n lookups each, tagged (about) last-n+1 .. last.
local others = {}
for _, o in ipairs(redis.call('SMEMBERS', orgs)) do
  if o ~= org then
    local key = prefix .. o
    redis.call('ZREMRANGEBYSCORE', key, '-inf', staleBefore)
    local n = redis.call('ZCARD', key)
    if n == 0 then
      redis.call('SREM', orgs, o)
      redis.call('HDEL', tags, o)
    else
      others[#others + 1] = {n, tonumber(redis.call('HGET', tags, o) or n)}
    end
  end
end
-- Nothing in flight anywhere: a new epoch, tags start again from 1.
if c == 0 and #others == 0 then redis.call('DEL', tags) end
local v = tonumber(redis.call('HGET', tags, '_v') or '0')
local mine = c > 0 and tonumber(redis.call('HGET', tags, org) or '0') or 0
local t = math.min(maxTag, math.max(v, mine) + 1)
redis.call('HSET', tags, org, t)
local added = redis.call('ZADD', own, now, ref)
redis.call('SADD', orgs, org)
local ahead = c
local total = c + added
for _, e in ipairs(others) do
  ahead = ahead + math.min(e[1], math.max(0, t - (e[2] - e[1])))
  total = total + e[1]
end
if ARGV[9] ~= '' then redis.call('PUBLISH', ARGV[9], 'a:' .. total) end
return {1, t, ahead, mean}
`;

// KEYS: tags hash. ARGV: tag of a lookup that starts now.
const STARTED = `
local v = tonumber(redis.call('HGET', KEYS[1], '_v') or '0')
if tonumber(ARGV[1]) > v then redis.call('HSET', KEYS[1], '_v', ARGV[1]) end
return 0
`;

// KEYS: orgs set, mean key, the org's set, tags hash. ARGV: org, reference, duration ms or -1,
// smoothing, the tag of a lookup that never started or -1, key prefix for per-org sets, the channel
// told the lane's count of lookups in flight ('' for none).
const FINISH = `
local removed = redis.call('ZREM', KEYS[3], ARGV[2])
-- A lookup refused after admission takes its tag back, if no later one took the next.
local unused = tonumber(ARGV[5])
if unused > 0 and tonumber(redis.call('HGET', KEYS[4], ARGV[1]) or '-1') == unused then redis.call('HINCRBY', KEYS[4], ARGV[1], -1) end
if redis.call('ZCARD', KEYS[3]) == 0 then
  redis.call('SREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[4], ARGV[1])
end
local d = tonumber(ARGV[3])
if d >= 0 then
  local m = tonumber(redis.call('GET', KEYS[2]) or ARGV[3])
  redis.call('SET', KEYS[2], tostring(m + tonumber(ARGV[4]) * (d - m)))
end
if ARGV[7] ~= '' and removed == 1 then
  local total = 0
  for _, o in ipairs(redis.call('SMEMBERS', KEYS[1])) do total = total + redis.call('ZCARD', ARGV[6] .. o) end
  redis.call('PUBLISH', ARGV[7], 'f:' .. total)
end
return 0
`;

// KEYS: orgs set. ARGV: key prefix for per-org sets, stale-before. The lane's lookups in flight, the
// stale ones dropped first (as ADMIT drops them).
const IN_FLIGHT = `
local total = 0
for _, o in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local key = ARGV[1] .. o
  redis.call('ZREMRANGEBYSCORE', key, '-inf', tonumber(ARGV[2]))
  total = total + redis.call('ZCARD', key)
end
return total
`;

const SMOOTHING = 0.05;
/** BullMQ's lowest priority (its largest number). */
const MAX_PRIORITY = 2 ** 21 - 1;
const BACKGROUND_MAX_TAG = MAX_PRIORITY - SYNC_MAX_TAG;
const NO_CAP = 2 ** 31;

/** Where the count of interactive lookups in flight is published on every change. */
export function interactiveChannel(prefix: string): string {
  return `${prefix}:{authority}:interactive`;
}

/** One lane's keys: its organisations, their in-flight sets and their tags (the mean is shared). */
function laneKeys(base: string) {
  return { orgs: `${base}:orgs`, orgPrefix: `${base}:inflight:`, tags: `${base}:tags` };
}

/**
 * `resource` names what is shared (the keys' hash tag): the identity authority by default; the face
 * workers use the same scheme under `face` (face.client.ts), whose counts no background lane reads.
 */
export function createFairShare(redis: RedisClient, o: { prefix: string; staleMs: number; defaultLookupMs: number; backgroundStaleMs?: number; resource?: 'authority' | 'face' }): FairShare {
  const resource = o.resource ?? 'authority';
  const tag = `${o.prefix}:{${resource}}`;
  const meanKey = `${tag}:lookup-ms`;
  const sync = laneKeys(tag);
  // Same hash tag: one Redis Cluster slot for both lanes and the shared mean.
  const bg = laneKeys(`${tag}:bg`);
  type Lane = ReturnType<typeof laneKeys>;
  // Only the synchronous lane's count is published: it is what background work yields to.
  const channelOf = (lane: Lane) => (lane === sync && resource === 'authority' ? interactiveChannel(o.prefix) : '');
  const script = { admit: defineScript(redis, 'idvFairAdmit', ADMIT), finish: defineScript(redis, 'idvFairFinish', FINISH), started: defineScript(redis, 'idvFairStarted', STARTED), inFlight: defineScript(redis, 'idvFairInFlight', IN_FLIGHT) };
  const admitIn = async (lane: Lane, a: { orgId: number; referenceId: string; cap: number; staleMs: number; maxTag: number }) => {
    const now = Date.now();
    return (await script.admit(
      3,
      lane.orgs,
      meanKey,
      lane.tags,
      lane.orgPrefix,
      String(a.orgId),
      a.referenceId,
      String(now),
      String(now - a.staleMs),
      String(a.cap),
      String(o.defaultLookupMs),
      String(a.maxTag),
      channelOf(lane),
    )) as [number, number, number, string | number];
  };
  const finishIn = async (lane: Lane, f: { orgId: number; referenceId: string; durationMs?: number; unusedTag?: number }) => {
    await script.finish(4, lane.orgs, meanKey, `${lane.orgPrefix}${f.orgId}`, lane.tags, String(f.orgId), f.referenceId, String(f.durationMs ?? -1), String(SMOOTHING), String(f.unusedTag ?? -1), lane.orgPrefix, channelOf(lane));
  };
  return {
    async admit({ orgId, referenceId, cap }) {
      const r = await admitIn(sync, { orgId, referenceId, cap, staleMs: o.staleMs, maxTag: SYNC_MAX_TAG });
      const meanLookupMs = Number(r[3]);
      if (r[0] === 0) return { admitted: false, reason: 'cap', inFlight: r[1], meanLookupMs };
      return { admitted: true, priority: r[1], ahead: r[2], meanLookupMs };
    },
    async started(priority) {
      if (isBackgroundPriority(priority)) await script.started(1, bg.tags, String(priority - SYNC_MAX_TAG));
      else if (priority > 1) await script.started(1, sync.tags, String(priority));
    },
    async finish(f) {
      await finishIn(sync, f);
    },
    background: {
      async admit({ orgId, referenceId }) {
        const r = await admitIn(bg, { orgId, referenceId, cap: NO_CAP, staleMs: o.backgroundStaleMs ?? o.staleMs, maxTag: BACKGROUND_MAX_TAG });
        return SYNC_MAX_TAG + r[1];
      },
      finish: (f) => finishIn(bg, f),
    },
    async inFlight(orgId) {
      return redis.zrangebyscore(`${sync.orgPrefix}${orgId}`, Date.now() - o.staleMs, '+inf');
    },
    async interactiveInFlight() {
      return Number(await script.inFlight(1, sync.orgs, sync.orgPrefix, String(Date.now() - o.staleMs)));
    },
    async meanLookupMs() {
      const m = Number(await redis.get(meanKey));
      return Number.isFinite(m) && m > 0 ? m : o.defaultLookupMs;
    },
    async snapshot() {
      const out = new Map<number, number>();
      for (const org of await redis.smembers(sync.orgs)) out.set(Number(org), await redis.zcard(`${sync.orgPrefix}${org}`));
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
