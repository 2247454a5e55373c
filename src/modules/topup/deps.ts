import type { DatabasePool } from 'slonik';
import type { PaystackClient } from '../../adapters/payment-processor/paystack.ts';
import type { Config } from '../../config.ts';
import type { Producer } from '../../jobs/producer.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Metrics } from '../../lib/metrics.ts';

/** What top-up code needs; both the API context and the worker deps have it. */
export type TopupDeps = {
  config: Config;
  db: DatabasePool;
  logger: Logger;
  producer: Producer;
  clock: Clock;
  processor: PaystackClient;
  metrics: Metrics;
};
