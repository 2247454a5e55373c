import type { Job } from 'bullmq';
import type { DatabasePool } from 'slonik';
import type { IdentityAuthority } from '../src/adapters/identity-authority/types.ts';
import type { PaystackClient } from '../src/adapters/payment-processor/paystack.ts';
import type { Config } from '../src/config.ts';
import type { JobName, JobPayload, JobResult } from '../src/jobs/catalog.ts';
import type { Producer } from '../src/jobs/producer.ts';
import type { Clock } from '../src/lib/clock.ts';
import type { Logger } from '../src/lib/logger.ts';
import type { Metrics } from '../src/lib/metrics.ts';
import type { BackgroundLane, FairShare } from '../src/modules/capacity/index.ts';
import type { AuthorityGuards } from '../src/modules/verification/index.ts';

export type WorkerDeps = {
  config: Config;
  db: DatabasePool;
  logger: Logger;
  identity: IdentityAuthority;
  processor: PaystackClient;
  producer: Producer;
  metrics: Metrics;
  clock: Clock;
  /** The authority's shared breaker and call rate. */
  authority: AuthorityGuards;
  fairShare: FairShare;
  /** The gate background steps pass, narrowed while interactive lookups are in flight. */
  lane: BackgroundLane;
};

/** `token` is the worker's lock on the job (to move it back to the delayed set from inside). */
export type Processor<N extends JobName> = (payload: JobPayload<N>, job: Job, deps: WorkerDeps, log: Logger, token?: string) => Promise<JobResult<N>>;

export type ProcessorMap = { [N in JobName]?: Processor<N> };
