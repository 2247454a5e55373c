import type { RequestHandler } from 'express';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from './errors.ts';
import type { RedisClient } from './redis.ts';

export type Limiter = {
  /** Consumes one point for each key; throws a 429 AppError with Retry-After when any is exhausted. */
  consume(keys: string[]): Promise<void>;
};

/**
 * Redis-backed fixed windows. When Redis is out of reach an in-memory limiter stands in, so that
 * calls which do not need Redis (fixtures, requery) keep their limits instead of failing.
 */
export function createLimiter(redis: RedisClient, o: { prefix: string; points: number; durationSeconds: number }): RateLimiterRedis {
  return new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: o.prefix,
    points: o.points,
    duration: o.durationSeconds,
    insuranceLimiter: new RateLimiterMemory({ points: o.points, duration: o.durationSeconds }),
  });
}

export function tooMany(res: RateLimiterRes): AppError {
  const seconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  return new AppError('rate_limited', 'Too many requests, retry later', { headers: { 'Retry-After': String(seconds) } });
}

/** Counters already taken (one Redis script, see the auth gate): a 429 when any is past its points. */
export function overLimit(counts: [{ consumed: number; msBeforeNext: number } | null, number][]): void {
  for (const [count, points] of counts) {
    if (count && count.consumed > points) throw tooMany(new RateLimiterRes(0, count.msBeforeNext, count.consumed));
  }
}

export async function consumeAll(pairs: [RateLimiterRedis, string][]): Promise<void> {
  try {
    await Promise.all(pairs.map(([l, k]) => l.consume(k)));
  } catch (err) {
    if (err instanceof RateLimiterRes) throw tooMany(err);
    throw err;
  }
}

export function rateLimitMiddleware(fn: (req: Parameters<RequestHandler>[0]) => Promise<void>): RequestHandler {
  return (req, _res, next) => {
    fn(req).then(() => next(), next);
  };
}
