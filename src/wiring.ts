// The shared wiring: the API and worker processes build their connections and adapters here, from
// the configuration, and nowhere else (what they hand their modules is typed in src/context.ts).
import type { DatabasePool } from 'slonik';
import { createIdentityAuthority } from './adapters/identity-authority/index.ts';
import { createPaystackClient } from './adapters/payment-processor/paystack.ts';
import type { Config } from './config.ts';
import type { AppDeps } from './context.ts';
import { createProducer } from './jobs/producer.ts';
import { QUEUES } from './jobs/catalog.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { API_DB_CONNECT_TIMEOUT_MS, createDb } from './lib/db.ts';
import type { Logger } from './lib/logger.ts';
import { createMetrics } from './lib/metrics.ts';
import { redisTarget } from './lib/redis.ts';
import { createAuthorityAccess } from './modules/capacity/index.ts';
import { followDebit } from './modules/alerts/index.ts';
import type { DebitFollowUp } from './modules/wallet/index.ts';
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

/**
 * What a face worker needs beyond its model: a small pool (a live face match's comparison settles
 * its verification there), a producer (what follows a debit may queue a charge or an e-mail),
 * alerts' followDebit over them, and its own metrics registry (the units its settlements debit).
 */
export async function createFaceWorkerDeps(config: Config, logger: Logger) {
  // FACE_CONCURRENCY settlements at once, each one transaction, and the debit's follow-up after it.
  const db = await createDb(config.DATABASE_URL, { maxPoolSize: Math.min(config.DATABASE_POOL_SIZE, config.FACE_CONCURRENCY + 2) });
  const producer = await createProducer({ redis: redisTarget(config), prefix: config.REDIS_PREFIX, role: 'worker', logger }).catch(async (err: unknown) => {
    await db.end();
    throw err;
  });
  return {
    db,
    producer,
    metrics: createMetrics({ process: 'face' }),
    followDebit: (orgId: number, followUp: DebitFollowUp, log: Logger) => followDebit({ db, config, logger, producer }, orgId, followUp, log),
    async close() {
      await producer.close();
      await db.end();
    },
  };
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
