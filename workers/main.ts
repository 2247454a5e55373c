import { DelayedError, UnrecoverableError, Worker, type Job } from 'bullmq';
import { loadConfigOrExit, type Config } from '../src/config.ts';
import { shutdownDeadlineMs } from '../src/jobs/budgets.ts';
import { startProcess, stopOnSignals } from '../src/lib/process.ts';
import { JOBS, QUEUES, SCHEDULES, queuePrefix, type JobName, type QueueName } from '../src/jobs/catalog.ts';
import { createProducer, type Producer } from '../src/jobs/producer.ts';
import { systemClock, type Clock } from '../src/lib/clock.ts';
import { createDb } from '../src/lib/db.ts';
import { describe } from '../src/lib/errors.ts';
import type { Logger } from '../src/lib/logger.ts';
import { createMetrics, type Metrics } from '../src/lib/metrics.ts';
import { createWorkerRedis, redisTarget, type RedisClient } from '../src/lib/redis.ts';
import { serveProcessMetrics } from '../src/modules/ops/index.ts';
import { startWebhookDispatcher } from '../src/modules/webhooks/index.ts';
import { createIdentityAdapter, createProcessorAdapter } from '../src/wiring.ts';
import { createAuthorityAccess, startBackgroundLane } from '../src/modules/capacity/index.ts';
import type { ProcessorMap, WorkerDeps } from '../src/context.ts';
import { batchProcessors } from './processors/batches.ts';
import { linkProcessors } from './processors/links.ts';
import { mailProcessors } from './processors/mail.ts';
import { statementProcessors } from './processors/statements.ts';
import { topupProcessors } from './processors/topup.ts';
import { verificationProcessors } from './processors/verification.ts';
import { walletProcessors } from './processors/wallet.ts';
import { webhookProcessors } from './processors/webhooks.ts';

export const PROCESSORS: ProcessorMap = { ...verificationProcessors, ...batchProcessors, ...topupProcessors, ...walletProcessors, ...webhookProcessors, ...statementProcessors, ...linkProcessors, ...mailProcessors };

/** The queues this worker runs: all but the face queue, which has its own process (workers/face.ts). */
export const MAIN_QUEUES: QueueName[] = Object.values(QUEUES).filter((q) => q !== QUEUES.face);

/** Refuses to start when a job of the catalog (on a queue this worker runs) has no processor. */
export function assertEveryJobHasAProcessor(map: ProcessorMap): void {
  const missing = (Object.keys(JOBS) as JobName[]).filter((n) => MAIN_QUEUES.includes(JOBS[n].queue) && !map[n]);
  if (missing.length > 0) throw new Error(`no processor for job(s): ${missing.join(', ')}`);
}

function concurrencyFor(queue: QueueName, c: Config): number {
  if (queue === QUEUES.lookups) return c.LOOKUP_CONCURRENCY;
  if (queue === QUEUES.credits) return c.CREDIT_CONCURRENCY;
  // Every batch lookup's settlement passes here (batch.lookup-settled): short steps, serialised per
  // batch by its row lock and its feed's advisory lock, so several batches move at once; each feed
  // holds one connection and borrows more, so this stays well under DATABASE_POOL_SIZE.
  if (queue === QUEUES.batches) return 8;
  return 2;
}

export type RunningWorkers = { workers: Worker[]; deps: WorkerDeps; close(): Promise<void> };

export async function startWorkers(
  config: Config,
  logger: Logger,
  opts: { clock?: Clock; metrics?: Metrics; processors?: ProcessorMap; schedules?: boolean } = {},
): Promise<RunningWorkers> {
  const processors = opts.processors ?? PROCESSORS;
  assertEveryJobHasAProcessor(processors);
  const db = await createDb(config.DATABASE_URL, { maxPoolSize: config.DATABASE_POOL_SIZE });
  // Webhook deliveries wait in PostgreSQL, not in a queue: the dispatcher claims them (see its module).
  // It starts first, needing PostgreSQL only, so a worker started while Redis is unreachable delivers
  // the events the outbox holds while it waits for Redis below, instead of exiting.
  let producerOnceReady: Producer | null = null;
  const webhooks = startWebhookDispatcher({ db, config, logger, producer: () => producerOnceReady });
  // It waits for no job's end: a face match's lookup hands its comparison to the face queue and
  // completes (verification's face-settle.ts); no worker is a client of another worker kind.
  const producer = await createProducer({
    redis: redisTarget(config),
    prefix: config.REDIS_PREFIX,
    role: 'worker',
    logger,
    unreachable: (err) => logger.warn({ err: describe(err) }, 'Redis unreachable: the queues start once it is back; webhooks are delivered meanwhile'),
  }).catch(async (err: unknown) => {
    await webhooks.close();
    await db.end();
    throw err;
  });
  producerOnceReady = producer;
  const metrics = opts.metrics ?? createMetrics({ process: 'worker' });
  const authority = await createAuthorityAccess(config, logger, metrics, producer.redis);
  const lane = await startBackgroundLane(config, logger, authority.fairShare);
  const deps: WorkerDeps = {
    config,
    db,
    logger,
    producer,
    identity: createIdentityAdapter(config),
    processor: createProcessorAdapter(config),
    metrics,
    clock: opts.clock ?? systemClock,
    authority: { breaker: authority.breaker, spacer: authority.spacer },
    fairShare: authority.fairShare,
    lane,
  };
  // Calls in flight to the authority, across every worker process: BullMQ holds the count in Redis
  // and hands out no lookup job beyond it (a job's retries stay inside its one slot).
  await producer.queue(QUEUES.lookups).setGlobalConcurrency(config.IDENTITY_MAX_CONCURRENCY);

  const connections: RedisClient[] = [];
  const workers = MAIN_QUEUES.map((queue) => {
    const connection = createWorkerRedis(redisTarget(config));
    connections.push(connection);
    const worker = new Worker(
      queue,
      async (job: Job, token?: string) => {
        const name = job.name as JobName;
        const def = JOBS[name];
        const processor = processors[name] as ((p: unknown, j: Job, d: WorkerDeps, l: Logger, t?: string) => Promise<unknown>) | undefined;
        if (!def || def.queue !== queue || !processor) throw new UnrecoverableError(`unknown job ${job.name} on ${queue}`);
        const payload = def.payload.safeParse(job.data);
        if (!payload.success) throw new UnrecoverableError(`invalid payload for ${job.name}`);
        const requestId = (payload.data as { requestId?: string }).requestId;
        const log = logger.child({ job: job.name, jobId: job.id, attempt: job.attemptsMade + 1, ...(requestId ? { reqId: requestId } : {}) });
        const started = process.hrtime.bigint();
        try {
          const result = def.result.parse(await processor(payload.data, job, deps, log, token));
          deps.metrics.jobDuration.observe({ queue, job: name, outcome: 'completed' }, Number(process.hrtime.bigint() - started) / 1e9);
          return result;
        } catch (err) {
          // Moved back to the delayed set by the processor (a background lookup waiting out an outage): not a failure.
          if (err instanceof DelayedError) throw err;
          deps.metrics.jobFailures.inc({ queue, job: name });
          deps.metrics.jobDuration.observe({ queue, job: name, outcome: 'failed' }, Number(process.hrtime.bigint() - started) / 1e9);
          log.warn({ err: describe(err) }, 'job attempt failed');
          throw err;
        }
      },
      {
        connection,
        prefix: queuePrefix(config.REDIS_PREFIX, queue),
        concurrency: concurrencyFor(queue, config),
        // A worker killed mid-job stops renewing its lock; once the lock expires the stalled-job check
        // moves the job back to wait and another worker runs it again (the settle step is idempotent).
        lockDuration: config.WORKER_LOCK_MS,
        stalledInterval: config.WORKER_STALLED_INTERVAL_MS,
        maxStalledCount: 2,
      },
    );
    worker.on('error', (err) => logger.error({ err: describe(err), queue }, 'worker error'));
    return worker;
  });

  if (opts.schedules !== false) {
    for (const [name, key] of Object.entries(SCHEDULES) as [JobName, keyof Config][]) {
      // On the job's own queue: a schedule on another queue's worker would be refused as unknown there.
      await producer.queue(JOBS[name].queue).upsertJobScheduler(name, { pattern: String(config[key]) }, { name, data: {}, opts: { removeOnComplete: { count: 100 }, removeOnFail: { count: 500 } } });
    }
  }

  await Promise.all(workers.map((w) => w.waitUntilReady()));
  logger.info({ queues: MAIN_QUEUES }, 'workers started');
  let closing: Promise<void> | undefined;
  return {
    workers,
    deps,
    close() {
      closing ??= (async () => {
        // Let jobs in progress finish, then release the pool and Redis, in that order.
        await Promise.allSettled([...workers.map((w) => w.close()), webhooks.close()]);
        await lane.close();
        await authority.close();
        await producer.close();
        await db.end();
        for (const c of connections) c.disconnect();
        logger.info('workers stopped');
      })();
      return closing;
    },
  };
}

if (import.meta.main) {
  const { config, logger } = startProcess('worker', loadConfigOrExit);
  const running = await startWorkers(config, logger);
  // The worker's own registry (jobs, upstream calls, credits, ledger audit), behind the API's metrics token.
  const metricsServer = await serveProcessMetrics({
    variable: 'WORKER_METRICS_PORT',
    port: config.WORKER_METRICS_PORT,
    host: config.HOST,
    token: config.METRICS_TOKEN,
    registry: running.deps.metrics.registry,
    // The workers are already taking jobs: they finish them before the process says why it stops.
    stop: () => running.close(),
  });
  stopOnSignals(async () => {
    metricsServer?.close();
    await running.close();
  }, logger, shutdownDeadlineMs(config, 'worker'));
}
