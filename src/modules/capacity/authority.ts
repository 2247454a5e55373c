import type { Config } from '../../config.ts';
import type { BackgroundLane, FairShare } from '../../context.ts';
import { createSharedBreaker, type SharedBreaker } from '../../adapters/identity-authority/breaker.ts';
import { createCallSpacer, type CallSpacer } from '../../lib/call-spacing.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Metrics } from '../../lib/metrics.ts';
import { createWorkerRedis, redisTarget, reportConnection, type RedisClient } from '../../lib/redis.ts';
import { createBackgroundLane } from './background-lane.ts';
import { createFairShare, interactiveChannel } from './fair-share.ts';

export type AuthorityAccess = { breaker: SharedBreaker; spacer: CallSpacer; fairShare: FairShare; close(): Promise<void> };

/**
 * The identity authority as a resource every process shares through Redis: its circuit breaker,
 * its calls-per-second limit and the per-organisation fair share. `redis` is the process's
 * producer connection (fail-fast in the API, patient in workers); the breaker also subscribes on a
 * connection of its own.
 */
export async function createAuthorityAccess(config: Config, logger: Logger, metrics: Metrics, redis: RedisClient): Promise<AuthorityAccess> {
  const tag = `${config.REDIS_PREFIX}:{authority}`;
  const states = { closed: 0, half_open: 1, open: 2 } as const;
  const breaker = await createSharedBreaker({
    redis,
    subscriber: reportConnection(createWorkerRedis(redisTarget(config)), logger, 'circuit breaker subscriber'),
    keyPrefix: tag,
    minimumCalls: config.IDENTITY_BREAKER_MIN_CALLS,
    windowMs: config.IDENTITY_BREAKER_WINDOW_MS,
    cooldownMs: config.IDENTITY_BREAKER_COOLDOWN_MS,
    probes: config.IDENTITY_BREAKER_PROBES,
    onStateChange: (state) => {
      metrics.authorityCircuit.set(states[state]);
      const log = state === 'open' ? logger.error.bind(logger) : logger.warn.bind(logger);
      log({ circuit: state }, `identity authority circuit ${state}`);
    },
  });
  // Present from the start (a process may start with the circuit closed and never see a change).
  metrics.authorityCircuit.set(states[breaker.state()]);
  return {
    breaker,
    spacer: createCallSpacer(redis, { key: `${tag}:next-call`, callsPerSecond: config.IDENTITY_MAX_RPS }),
    fairShare: createFairShare(redis, {
      prefix: config.REDIS_PREFIX,
      // A lookup still counted after this long lost its job with a crashed worker; the sweep re-runs it.
      staleMs: Math.max(4 * config.VERIFY_WAIT_MS, 120_000),
      defaultLookupMs: 1000,
      // Asynchronous and batch lookups count until they end, at the latest at their deadline.
      backgroundStaleMs: config.ASYNC_MAX_WAIT_HOURS * 3600_000,
    }),
    close: () => breaker.close(),
  };
}

/** A worker process's gate for background steps, on a subscriber connection of its own. */
export function startBackgroundLane(config: Config, logger: Logger, fairShare: FairShare): Promise<BackgroundLane> {
  return createBackgroundLane({
    subscriber: reportConnection(createWorkerRedis(redisTarget(config)), logger, 'background lane subscriber'),
    channel: interactiveChannel(config.REDIS_PREFIX),
    busyLimit: config.BACKGROUND_STEPS_WHILE_INTERACTIVE,
    quietMs: config.INTERACTIVE_QUIET_MS,
    count: () => fairShare.interactiveInFlight(),
  });
}
