import type { RateLimiterRedis } from 'rate-limiter-flexible';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { DatabasePool } from 'slonik';
import type { Config } from '../../config.ts';
import { createLimiter, tooMany } from '../../lib/rate-limit.ts';
import type { RedisClient } from '../../lib/redis.ts';
import { recordAudit } from '../audit/index.ts';

/** Wrong one-time or recovery codes a user may send in a window, on every endpoint that takes one. */
export const MAX_CODE_FAILURES = 10;
export const CODE_FAILURE_WINDOW_SECONDS = 15 * 60;

export type CodeCountDeps = { db: DatabasePool; redis: RedisClient; config: Pick<Config, 'REDIS_PREFIX'> };

/** Whose code it is, for the event recorded when the count is reached (the audit writer adds the request's id and address). */
export type CodeAttempt = { userId: number; orgId: number | null };

// One limiter per Redis client and prefix (a test runs several stacks in one process).
const limiters = new WeakMap<RedisClient, Map<string, RateLimiterRedis>>();

function limiterOf(deps: CodeCountDeps): RateLimiterRedis {
  let byPrefix = limiters.get(deps.redis);
  if (!byPrefix) limiters.set(deps.redis, (byPrefix = new Map()));
  let limiter = byPrefix.get(deps.config.REDIS_PREFIX);
  if (!limiter) {
    limiter = createLimiter(deps.redis, { prefix: `${deps.config.REDIS_PREFIX}:mfa:codes`, points: MAX_CODE_FAILURES, durationSeconds: CODE_FAILURE_WINDOW_SECONDS });
    byPrefix.set(deps.config.REDIS_PREFIX, limiter);
  }
  return limiter;
}

/**
 * Checks a code under the user's failure count: a point is taken before the code is checked (one
 * atomic INCR, so parallel guesses cannot all pass before any is counted) and given back when the
 * code is right, or when the check failed for another reason than the code (a database fault).
 * Past MAX_CODE_FAILURES in the window: 429 with Retry-After, the code not even looked at; the
 * request that first goes past the count records `mfa.codes_locked` (exactly one per window).
 */
export async function countedCode(deps: CodeCountDeps, who: CodeAttempt, check: () => Promise<boolean>): Promise<boolean> {
  const limiter = limiterOf(deps);
  const key = String(who.userId);
  let taken: RateLimiterRes;
  try {
    taken = await limiter.consume(key);
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    if (err.consumedPoints === MAX_CODE_FAILURES + 1) {
      await recordAudit(deps.db, {
        orgId: who.orgId,
        actor: `user:${who.userId}`,
        action: 'mfa.codes_locked',
        target: `user:${who.userId}`,
        details: { failures: MAX_CODE_FAILURES, window_seconds: CODE_FAILURE_WINDOW_SECONDS },
      });
    }
    throw tooMany(err);
  }
  const started = Date.now();
  // Only within the window the point was taken in: once it has ended, the key counts a newer window.
  const giveBack = async () => {
    if (Date.now() - started < taken.msBeforeNext - 50) await limiter.reward(key, 1).catch(() => undefined);
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
