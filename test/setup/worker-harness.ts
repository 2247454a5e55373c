import { createProducer, type Producer } from '../../src/jobs/producer.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { createMetrics } from '../../src/lib/metrics.ts';
import { redisTarget } from '../../src/lib/redis.ts';
import { createAuthorityAccess, startBackgroundLane } from '../../src/modules/capacity/index.ts';
import { createIdentityAdapter, createProcessorAdapter } from '../../src/wiring.ts';
import type { WorkerDeps } from '../../src/context.ts';
import { startStack, type Stack, type StackOptions } from './harness.ts';

export type WorkerHarness = { stack: Stack; producer: Producer; deps: WorkerDeps; close(): Promise<void> };

/**
 * A stack with no workers of its own, and what a worker process would hand its processors: tests run
 * the job processors by hand, one step at a time, against the stack's real queues, database and
 * simulators.
 */
export async function startWorkerHarness(opts: StackOptions = {}): Promise<WorkerHarness> {
  const log = createLogger({ level: 'silent' });
  const stack = await startStack({ ...opts, workers: false });
  const producer = await createProducer({ redis: redisTarget(stack.config), prefix: stack.config.REDIS_PREFIX, role: 'worker' });
  const metrics = createMetrics({ process: 'worker', defaults: false });
  const authority = await createAuthorityAccess(stack.config, log, metrics, producer.redis);
  const lane = await startBackgroundLane(stack.config, log, authority.fairShare);
  const deps: WorkerDeps = {
    config: stack.config,
    db: stack.db,
    logger: log,
    identity: createIdentityAdapter(stack.config),
    processor: createProcessorAdapter(stack.config),
    producer,
    metrics,
    clock: stack.clock,
    authority: { breaker: authority.breaker, spacer: authority.spacer },
    fairShare: authority.fairShare,
    lane,
  };
  return {
    stack,
    producer,
    deps,
    async close() {
      await lane.close();
      await authority.close();
      await producer.close();
      await stack.close();
    },
  };
}
