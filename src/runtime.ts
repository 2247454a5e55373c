import type { DatabasePool } from 'slonik';
import { createIdentityAuthority } from './adapters/identity-authority/index.ts';
import { createPaystackClient } from './adapters/payment-processor/paystack.ts';
import type { Config } from './config.ts';
import type { AppDeps } from './context.ts';
import { createProducer } from './jobs/producer.ts';
import { QUEUES } from './jobs/catalog.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { createDb } from './lib/db.ts';
import type { Logger } from './lib/logger.ts';
import { createMetrics } from './lib/metrics.ts';

/** Wires the API's dependencies from configuration; the one place that knows every adapter. */
export async function createApiDeps(config: Config, logger: Logger, opts: { clock?: Clock; db?: DatabasePool } = {}): Promise<AppDeps & { close(): Promise<void> }> {
  const db = opts.db ?? (await createDb(config.DATABASE_URL, { maxPoolSize: config.DATABASE_POOL_SIZE }));
  const producer = await createProducer({
    redisUrl: config.REDIS_URL,
    prefix: config.REDIS_PREFIX,
    waitFor: [QUEUES.lookups, QUEUES.credits],
  });
  return {
    config,
    db,
    logger,
    producer,
    clock: opts.clock ?? systemClock,
    identity: createIdentityAdapter(config),
    processor: createProcessorAdapter(config),
    metrics: createMetrics({ process: 'api' }),
    async close() {
      await producer.close();
      if (!opts.db) await db.end();
    },
  };
}

export function createIdentityAdapter(config: Config) {
  return createIdentityAuthority({
    dialect: config.IDENTITY_DIALECT,
    baseUrl: config.identityBaseUrl,
    apiKey: config.IDENTITY_API_KEY,
    appId: config.IDENTITY_APP_ID || undefined,
    timeoutMs: config.IDENTITY_TIMEOUT_MS,
  });
}

export function createProcessorAdapter(config: Config) {
  return createPaystackClient({ baseUrl: config.paystackBaseUrl, secretKey: config.PAYSTACK_SECRET_KEY, timeoutMs: config.PAYSTACK_TIMEOUT_MS });
}
