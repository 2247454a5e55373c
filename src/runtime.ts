import type { DatabasePool } from 'slonik';
import { createSharedBreaker, type SharedBreaker } from './adapters/identity-authority/breaker.ts';
import { createIdentityAuthority } from './adapters/identity-authority/index.ts';
import { createPaystackClient } from './adapters/payment-processor/paystack.ts';
import type { Config } from './config.ts';
import type { AppDeps } from './context.ts';
import { createProducer } from './jobs/producer.ts';
import { QUEUES } from './jobs/catalog.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { API_DB_CONNECT_TIMEOUT_MS, createDb } from './lib/db.ts';
import type { Logger } from './lib/logger.ts';
import { createCallSpacer, type CallSpacer } from './lib/call-spacing.ts';
import type { Metrics } from './lib/metrics.ts';
import { createMetrics } from './lib/metrics.ts';
import { createWorkerRedis, redisTarget, reportConnection, type RedisClient } from './lib/redis.ts';
import { createBackgroundLane, type BackgroundLane } from './lib/background-lane.ts';
import { createFairShare, interactiveChannel, type FairShare } from './lib/fair-share.ts';
import { followDebit } from './modules/alerts/index.ts';
import { createInlineLookup } from './modules/verification/index.ts';

/** Wires the API's dependencies from configuration; the one place that knows every adapter. */
export async function createApiDeps(config: Config, logger: Logger, opts: { clock?: Clock; db?: DatabasePool } = {}): Promise<AppDeps & { close(): Promise<void> }> {
  const db = opts.db ?? (await createDb(config.DATABASE_URL, { maxPoolSize: config.DATABASE_POOL_SIZE, connectTimeoutMs: API_DB_CONNECT_TIMEOUT_MS }));
  // As many connections as the API runs exports at once (CSV_EXPORTS_PER_PROCESS, src/lib/csv-export.ts); a cursor's
  // statement timeout counts the client's reading time, hence minutes rather than seconds.
  const exportDb = await createDb(config.DATABASE_URL, { maxPoolSize: config.CSV_EXPORTS_PER_PROCESS, statementTimeoutMs: 30 * 60_000 });
  const producer = await createProducer({
    redis: redisTarget(config),
    prefix: config.REDIS_PREFIX,
    waitFor: [QUEUES.lookups, QUEUES.credits, QUEUES.face],
    role: 'api',
    logger,
  });
  const metrics = createMetrics({ process: 'api' });
  const authority = await createAuthorityAccess(config, logger, metrics, producer.redis);
  const identity = createIdentityAdapter(config);
  // The benchmark's yardstick: the lookup runs here with the deps a worker builds (see LOOKUP_INLINE),
  // as many at once as one worker process runs, within the authority's limit.
  const lookupInline = config.sandboxSwitches?.LOOKUP_INLINE
    ? createInlineLookup(
        {
          db,
          config,
          identity,
          metrics,
          logger,
          producer,
          authority: { breaker: authority.breaker, spacer: authority.spacer },
          fairShare: authority.fairShare,
          followDebit: (orgId, followUp, log) => followDebit({ db, config, logger, producer }, orgId, followUp, log),
        },
        { maxConcurrency: Math.min(config.LOOKUP_CONCURRENCY, config.IDENTITY_MAX_CONCURRENCY) },
      )
    : undefined;
  return {
    config,
    db,
    exportDb,
    logger,
    producer,
    clock: opts.clock ?? systemClock,
    identity,
    processor: createProcessorAdapter(config),
    metrics,
    fairShare: authority.fairShare,
    circuit: authority.breaker,
    ...(lookupInline ? { lookupInline } : {}),
    async close() {
      await authority.close();
      await producer.close();
      await exportDb.end();
      if (!opts.db) await db.end();
    },
  };
}

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

export function createIdentityAdapter(config: Config) {
  return createIdentityAuthority({
    dialect: config.IDENTITY_DIALECT,
    baseUrl: config.identityBaseUrl,
    apiKey: config.IDENTITY_API_KEY,
    appId: config.identityAppId || undefined,
    timeoutMs: config.IDENTITY_TIMEOUT_MS,
  });
}

export function createProcessorAdapter(config: Config) {
  return createPaystackClient({ baseUrl: config.paystackBaseUrl, secretKey: config.PAYSTACK_SECRET_KEY, timeoutMs: config.PAYSTACK_TIMEOUT_MS });
}
