import type { RedisClient } from './redis.ts';

/**
 * The fixed-window counters of the rate limits, counted in Redis exactly as rate-limiter-flexible
 * counts them (the window opened by its first hit, `SET NX EX` then `INCRBY`; a key left without a
 * time to live gets one), so that the limiter and these scripts share keys and counts.
 *
 * A count also answers which window it counted in: the instant the window's key expires, as Redis
 * stores it (PEXPIRETIME, Redis 7.0). It is fixed when the window opens and nothing moves it (neither
 * these scripts nor the limiter's consume or reward touch a live window's expiry), and a window
 * opened after one ended expires strictly later, so no two windows of a key share it. A count is
 * given back by naming that window: the counter is lowered only if it is still that same window (an
 * equality, no clock and no tolerance), so a give-back that comes after the window ended leaves the
 * new window's count alone, however late it comes and however short the window.
 * (Only a key deleted by hand and opened again within the same millisecond would repeat an expiry
 * instant; the service deletes none of these keys.)
 */

/**
 * Lua: `count(key, seconds)` counts one hit and returns the count, the window's time left in ms and
 * the window's identity. Scripts that count (the auth gate's, `countOne` below) start with it.
 */
export const COUNT_LUA = `
local function count(key, seconds)
  redis.call('set', key, 0, 'EX', seconds, 'NX')
  local consumed = redis.call('incrby', key, 1)
  local ttl = redis.call('pttl', key)
  if ttl == -1 then
    redis.call('expire', key, seconds)
    ttl = 1000 * seconds
  end
  return consumed, ttl, redis.call('pexpiretime', key)
end
`;

const COUNT_ONE = `${COUNT_LUA}
local consumed, ttl, window = count(KEYS[1], ARGV[1])
return {consumed, ttl, window}
`;

/** KEYS: the counters; ARGV: for each, the window its count was taken in. */
const GIVE_BACK = `
for i = 1, #KEYS do
  if redis.call('pexpiretime', KEYS[i]) == tonumber(ARGV[i]) and tonumber(redis.call('get', KEYS[i]) or '0') > 0 then
    redis.call('decrby', KEYS[i], 1)
  end
end
return 0
`;

/** A counter after one hit: the hits its window holds, the window's time left, and which window it is. */
export type WindowCount = { consumed: number; msBeforeNext: number; window: number };

/** A count to give back: the counter's key and the window it was taken in. */
export type Taken = { key: string; window: number };

type WithScripts = {
  idvCountOne(key: string, seconds: number): Promise<number[]>;
  idvGiveBack(...args: (string | number)[]): Promise<number>;
};

export type FixedWindows = {
  /** One hit on `key`, in one round trip. */
  count(key: string, seconds: number): Promise<WindowCount>;
  /**
   * Lowers each counter by the one count taken in its window, if that window is still the key's
   * (one round trip). On a Redis Cluster, the keys of one call must share a hash slot.
   */
  giveBack(taken: Taken[]): Promise<void>;
};

export function fixedWindows(redis: RedisClient): FixedWindows {
  // defineCommand sends EVALSHA, and the script itself once when Redis answers NOSCRIPT.
  redis.defineCommand('idvCountOne', { numberOfKeys: 1, lua: COUNT_ONE });
  redis.defineCommand('idvGiveBack', { lua: GIVE_BACK });
  const call = redis as unknown as WithScripts;
  return {
    async count(key, seconds) {
      const [consumed, msBeforeNext, window] = (await call.idvCountOne(key, seconds)).map(Number);
      return { consumed: consumed!, msBeforeNext: msBeforeNext!, window: window! };
    },
    async giveBack(taken) {
      if (taken.length === 0) return;
      await call.idvGiveBack(taken.length, ...taken.map((t) => t.key), ...taken.map((t) => String(t.window)));
    },
  };
}
