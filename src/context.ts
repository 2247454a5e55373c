import type { RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import type { DatabasePool } from 'slonik';
import type { IdentityAuthority } from './adapters/identity-authority/types.ts';
import type { PaystackClient } from './adapters/payment-processor/paystack.ts';
import type { Config } from './config.ts';
import type { Producer } from './jobs/producer.ts';
import type { Clock } from './lib/clock.ts';
import type { Logger } from './lib/logger.ts';
import type { Metrics } from './lib/metrics.ts';

/** What the HTTP layer is built from; createApp receives it whole, tests build their own. */
export type AppDeps = {
  config: Config;
  db: DatabasePool;
  logger: Logger;
  producer: Producer;
  clock: Clock;
  identity: IdentityAuthority;
  processor: PaystackClient;
  metrics: Metrics;
};

export type AppContext = AppDeps & {
  redis: Redis;
  authenticate: RequestHandler;
  /** Per-token and per-organisation limits, applied after authentication. */
  rateLimit: RequestHandler;
};
