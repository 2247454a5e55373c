import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { loadConfigOrExit, type Config } from '../src/config.ts';
import { JOBS, QUEUES, SCHEDULES, type JobName, type QueueName } from '../src/jobs/catalog.ts';
import { createProducer } from '../src/jobs/producer.ts';
import { systemClock, type Clock } from '../src/lib/clock.ts';
import { createDb } from '../src/lib/db.ts';
import { describe } from '../src/lib/http.ts';
import { createLogger, type Logger } from '../src/lib/logger.ts';
import { createMetrics, type Metrics } from '../src/lib/metrics.ts';
import { createWorkerRedis } from '../src/lib/redis.ts';
import { startMetricsServer } from '../src/modules/ops/metrics.ts';
import { createIdentityAdapter, createProcessorAdapter } from '../src/runtime.ts';
import type { ProcessorMap, WorkerDeps } from './context.ts';
import { topupProcessors } from './processors/topup.ts';
import { verificationProcessors } from './processors/verification.ts';

export const PROCESSORS: ProcessorMap = { ...verificationProcessors, ...topupProcessors };

/** Refuses to start when a job of the catalog has no processor. */
export function assertEveryJobHasAProcessor(map: ProcessorMap): void {
  const missing = (Object.keys(JOBS) as JobName[]).filter((n) => !map[n]);
  if (missing.length > 0) throw new Error(`no processor for job(s): ${missing.join(', ')}`);
}

function concurrencyFor(queue: QueueName, c: Config): number {
  if (queue === QUEUES.lookups) return c.LOOKUP_CONCURRENCY;
  if (queue === QUEUES.credits) return c.CREDIT_CONCURRENCY;
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
  const producer = await createProducer({ redisUrl: config.REDIS_URL, prefix: config.REDIS_PREFIX });
  const deps: WorkerDeps = {
    config,
    db,
    logger,
    producer,
    identity: createIdentityAdapter(config),
    processor: createProcessorAdapter(config),
    metrics: opts.metrics ?? createMetrics({ process: 'worker' }),
    clock: opts.clock ?? systemClock,
  };

  const connections: Redis[] = [];
  const workers = Object.values(QUEUES).map((queue) => {
    const connection = createWorkerRedis(config.REDIS_URL);
    connections.push(connection);
    const worker = new Worker(
      queue,
      async (job: Job) => {
        const name = job.name as JobName;
        const def = JOBS[name];
        const processor = processors[name] as ((p: unknown, j: Job, d: WorkerDeps, l: Logger) => Promise<unknown>) | undefined;
        if (!def || def.queue !== queue || !processor) throw new UnrecoverableError(`unknown job ${job.name} on ${queue}`);
        const payload = def.payload.safeParse(job.data);
        if (!payload.success) throw new UnrecoverableError(`invalid payload for ${job.name}`);
        const requestId = (payload.data as { requestId?: string }).requestId;
        const log = logger.child({ job: job.name, jobId: job.id, attempt: job.attemptsMade + 1, ...(requestId ? { reqId: requestId } : {}) });
        const started = process.hrtime.bigint();
        try {
          const result = def.result.parse(await processor(payload.data, job, deps, log));
          deps.metrics.jobDuration.observe({ queue, job: name, outcome: 'completed' }, Number(process.hrtime.bigint() - started) / 1e9);
          return result;
        } catch (err) {
          deps.metrics.jobFailures.inc({ queue, job: name });
          deps.metrics.jobDuration.observe({ queue, job: name, outcome: 'failed' }, Number(process.hrtime.bigint() - started) / 1e9);
          log.warn({ err: describe(err) }, 'job attempt failed');
          throw err;
        }
      },
      {
        connection,
        prefix: config.REDIS_PREFIX,
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
    const maintenance = producer.queue(QUEUES.maintenance);
    for (const [name, key] of Object.entries(SCHEDULES) as [JobName, keyof Config][]) {
      await maintenance.upsertJobScheduler(name, { pattern: String(config[key]) }, { name, data: {}, opts: { removeOnComplete: { count: 100 }, removeOnFail: { count: 500 } } });
    }
  }

  await Promise.all(workers.map((w) => w.waitUntilReady()));
  logger.info({ queues: Object.values(QUEUES) }, 'workers started');
  let closing: Promise<void> | undefined;
  return {
    workers,
    deps,
    close() {
      closing ??= (async () => {
        // Let jobs in progress finish, then release the pool and Redis, in that order.
        await Promise.allSettled(workers.map((w) => w.close()));
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
  try {
    process.loadEnvFile();
  } catch {
    // No .env file.
  }
  const config = loadConfigOrExit();
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'worker' });
  const running = await startWorkers(config, logger);
  // The worker's own registry (jobs, upstream calls, credits, ledger audit), behind the API's metrics token.
  const metricsServer = config.METRICS_TOKEN
    ? await startMetricsServer({ registry: running.deps.metrics.registry, token: config.METRICS_TOKEN, port: config.WORKER_METRICS_PORT, host: config.HOST })
    : null;
  const shutdown = () => {
    metricsServer?.close();
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}
