import { Queue, QueueEvents, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { createApiRedis, createWorkerRedis } from '../lib/redis.ts';
import { JOBS, QUEUES, type JobName, type JobPayload, type JobResult, type QueueName } from './catalog.ts';

export type WaitOutcome<N extends JobName> =
  | { status: 'completed'; result: JobResult<N> }
  | { status: 'failed'; reason: string }
  | { status: 'timeout' };

type Waiter = { settle: (o: WaitOutcome<JobName>) => void; name: JobName };

export type Producer = {
  enqueue<N extends JobName>(name: N, payload: JobPayload<N>, opts: { jobId: string } & Partial<JobsOptions>): Promise<void>;
  /**
   * Adds the job and waits for its end. A timeout is an answer, not an error: the job goes on and
   * the caller falls back to the database, which is the truth.
   */
  enqueueAndWait<N extends JobName>(name: N, payload: JobPayload<N>, opts: { jobId: string; timeoutMs: number }): Promise<WaitOutcome<N>>;
  queue(name: QueueName): Queue;
  queues(): Queue[];
  redis: Redis;
  close(): Promise<void>;
};

export function defaultJobOptions(name: JobName): JobsOptions {
  const def = JOBS[name];
  return {
    attempts: def.attempts,
    backoff: def.backoffMs > 0 ? { type: 'exponential', delay: def.backoffMs } : undefined,
    // Finished jobs are kept briefly for bull-board and then dropped; idempotency lives in PostgreSQL.
    removeOnComplete: { age: 3600, count: 5000 },
    removeOnFail: { age: 7 * 24 * 3600, count: 10000 },
  };
}

export async function createProducer(opts: { redisUrl: string; prefix: string; waitFor?: QueueName[] }): Promise<Producer> {
  const redis = createApiRedis(opts.redisUrl);
  if (redis.status !== 'ready') {
    await new Promise<void>((resolve, reject) => {
      redis.once('ready', () => resolve());
      redis.once('error', reject);
    });
  }
  const queues = new Map<QueueName, Queue>();
  for (const q of Object.values(QUEUES)) {
    queues.set(q, new Queue(q, { connection: redis, prefix: opts.prefix }));
  }

  // One QueueEvents per waited-on queue per process, and one waiter map instead of a listener per
  // request: listeners per wait trip MaxListenersExceeded and cost CPU under load.
  const waiters = new Map<string, Waiter>();
  const events: QueueEvents[] = [];
  const blockingClients: Redis[] = [];
  for (const q of opts.waitFor ?? []) {
    const blocking = createWorkerRedis(opts.redisUrl);
    blockingClients.push(blocking);
    // Start reading from the stream's current last entry rather than '$': QueueEvents reports ready
    // before its first XREAD, and a job finishing in that gap would otherwise never be seen.
    const last = (await redis.xrevrange(`${opts.prefix}:${q}:events`, '+', '-', 'COUNT', 1))[0]?.[0] ?? '0-0';
    const qe = new QueueEvents(q, { connection: blocking, prefix: opts.prefix, lastEventId: last, autorun: true });
    qe.on('completed', ({ jobId, returnvalue }) => {
      const w = waiters.get(jobId);
      if (!w) return;
      const value = typeof returnvalue === 'string' ? JSON.parse(returnvalue) : returnvalue;
      const parsed = JOBS[w.name].result.safeParse(value);
      w.settle(parsed.success ? { status: 'completed', result: parsed.data } : { status: 'failed', reason: 'malformed job result' });
    });
    qe.on('failed', ({ jobId, failedReason }) => {
      waiters.get(jobId)?.settle({ status: 'failed', reason: failedReason });
    });
    qe.on('error', () => {
      // Reconnects by itself; waits in flight fall back to the database when they time out.
    });
    await qe.waitUntilReady();
    events.push(qe);
  }

  const queueFor = (name: JobName): Queue => queues.get(JOBS[name].queue)!;

  return {
    redis,
    queue: (name) => queues.get(name)!,
    queues: () => [...queues.values()],
    async enqueue(name, payload, jobOpts) {
      const data = JOBS[name].payload.parse(payload);
      await queueFor(name).add(name, data, { ...defaultJobOptions(name), ...jobOpts });
    },
    async enqueueAndWait<N extends JobName>(name: N, payload: JobPayload<N>, o: { jobId: string; timeoutMs: number }): Promise<WaitOutcome<N>> {
      const data = JOBS[name].payload.parse(payload);
      const jobId = o.jobId;
      let timer: NodeJS.Timeout | undefined;
      const done = new Promise<WaitOutcome<N>>((resolve) => {
        const settle = (outcome: WaitOutcome<JobName>) => {
          if (waiters.get(jobId)?.settle !== settle) return;
          waiters.delete(jobId);
          clearTimeout(timer);
          resolve(outcome as WaitOutcome<N>);
        };
        waiters.set(jobId, { settle, name });
        timer = setTimeout(() => settle({ status: 'timeout' }), o.timeoutMs);
      });
      try {
        const job = await queueFor(name).add(name, data, { ...defaultJobOptions(name), jobId });
        // A job id that already existed and had finished emits no new event: read its state once.
        if (job.finishedOn) {
          const w = waiters.get(jobId);
          if (job.returnvalue !== undefined && job.returnvalue !== null) {
            const parsed = JOBS[name].result.safeParse(job.returnvalue);
            if (parsed.success) w?.settle({ status: 'completed', result: parsed.data });
          } else if (job.failedReason) {
            w?.settle({ status: 'failed', reason: job.failedReason });
          }
        }
      } catch (err) {
        waiters.delete(jobId);
        clearTimeout(timer);
        throw err;
      }
      return done;
    },
    async close() {
      for (const w of waiters.values()) w.settle({ status: 'timeout' });
      await Promise.allSettled(events.map((e) => e.close()));
      await Promise.allSettled([...queues.values()].map((q) => q.close()));
      for (const c of blockingClients) c.disconnect();
      redis.disconnect();
    },
  };
}
