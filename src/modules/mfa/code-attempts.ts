import { RateLimiterRes, type RateLimiterRedis } from 'rate-limiter-flexible';
import type { DatabasePool } from 'slonik';
import type { Config } from '../../config.ts';
import { fixedWindows, type FixedWindows } from '../../lib/fixed-window.ts';
import { createLimiter, tooMany } from '../../lib/rate-limit.ts';
import type { RedisClient } from '../../lib/redis.ts';
import { recordAudit } from '../audit/index.ts';

/** Wrong one-time or recovery codes a user may send in a window, on every endpoint that takes one. */
export const MAX_CODE_FAILURES = 10;
export const CODE_FAILURE_WINDOW_SECONDS = 15 * 60;

export type CodeCountDeps = { db: DatabasePool; redis: RedisClient; config: Pick<Config, 'REDIS_PREFIX'> };

/** Whose code it is, for the event recorded when the count is reached (the audit writer adds the request's id and address). */
export type CodeAttempt = { userId: number; orgId: number | null };

type Counter = { limiter: RateLimiterRedis; windows: FixedWindows; prefix: string };

// One per Redis client and prefix (a test runs several stacks in one process).
const counters = new WeakMap<RedisClient, Map<string, Counter>>();

function counterOf(deps: CodeCountDeps): Counter {
  let byPrefix = counters.get(deps.redis);
  if (!byPrefix) counters.set(deps.redis, (byPrefix = new Map()));
  let counter = byPrefix.get(deps.config.REDIS_PREFIX);
  if (!counter) {
    const prefix = `${deps.config.REDIS_PREFIX}:mfa:codes`;
    counter = { limiter: createLimiter(deps.redis, { prefix, points: MAX_CODE_FAILURES, durationSeconds: CODE_FAILURE_WINDOW_SECONDS }), windows: fixedWindows(deps.redis), prefix };
    byPrefix.set(deps.config.REDIS_PREFIX, counter);
  }
  return counter;
}

/**
 * Checks a code under the user's failure count: a point is taken before the code is checked (one
 * atomic script, so parallel guesses cannot all pass before any is counted) and given back when the
 * code is right, or when the check failed for another reason than the code (a database fault).
 * The point is given back to the window it was taken in, named by the identity the count answered
 * (lib/fixed-window.ts): if that window has ended meanwhile, the newer window keeps its count.
 * Past MAX_CODE_FAILURES in the window: 429 with Retry-After, the code not even looked at; the
 * request that first goes past the count records `mfa.codes_locked` (exactly one per window).
 * The key is the one rate-limiter-flexible names and counts alike (`<prefix>:mfa:codes:<user id>`);
 * when the script fails (Redis unreachable), that limiter counts instead, in Redis or in its
 * in-process stand-in, and its point is not given back: while Redis fails a right code counts too,
 * which errs toward refusing, never toward more guesses.
 */
export async function countedCode(deps: CodeCountDeps, who: CodeAttempt, check: () => Promise<boolean>): Promise<boolean> {
  const counter = counterOf(deps);
  const taken = await takePoint(counter, String(who.userId));
  if (taken.consumed > MAX_CODE_FAILURES) {
    if (taken.consumed === MAX_CODE_FAILURES + 1) {
      await recordAudit(deps.db, {
        orgId: who.orgId,
        actor: `user:${who.userId}`,
        action: 'mfa.codes_locked',
        target: `user:${who.userId}`,
        details: { failures: MAX_CODE_FAILURES, window_seconds: CODE_FAILURE_WINDOW_SECONDS },
      });
    }
    throw tooMany(new RateLimiterRes(0, taken.msBeforeNext, taken.consumed));
  }
  const giveBack = async () => {
    if (taken.window !== null) await counter.windows.giveBack([{ key: taken.key, window: taken.window }]).catch(() => undefined);
  };
  let right: boolean;
  try {
    right = await check();
  } catch (err) {
    await giveBack();
    throw err;
  }
  if (right) await giveBack();
  return right;
}

/** The user's point, and the window it was taken in (null when the limiter stood in). */
async function takePoint(counter: Counter, user: string): Promise<{ key: string; consumed: number; msBeforeNext: number; window: number | null }> {
  const key = `${counter.prefix}:${user}`;
  try {
    return { key, ...(await counter.windows.count(key, CODE_FAILURE_WINDOW_SECONDS)) };
  } catch {
    try {
      const res = await counter.limiter.consume(user);
      return { key, consumed: res.consumedPoints, msBeforeNext: res.msBeforeNext, window: null };
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      return { key, consumed: err.consumedPoints, msBeforeNext: err.msBeforeNext, window: null };
    }
  }
}
