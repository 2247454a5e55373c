import { Queue, QueueEvents, type JobsOptions } from 'bullmq';
import { describe } from '../lib/errors.ts';
import { leaveIntake } from '../lib/intake.ts';
import { isUnavailable } from '../lib/http.ts';
import type { Logger } from '../lib/logger.ts';
import { createApiRedis, createWorkerRedis, reportConnection, type RedisClient, type RedisTarget } from '../lib/redis.ts';
import { JOBS, QUEUES, queuePrefix, type JobName, type JobPayload, type JobResult, type QueueName } from './catalog.ts';

/** How long closing waits for BullMQ's own orderly close (milliseconds when Redis answers) before disconnecting. */
const GRACEFUL_CLOSE_MS = 3000;

export type WaitOutcome<N extends JobName> =
  | { status: 'completed'; result: JobResult<N> }
  | { status: 'failed'; reason: string }
  | { status: 'timeout' };

type Waiter = { settle: (o: WaitOutcome<JobName>) => void; name: JobName };

export type WaitOptions = {
  jobId: string;
  timeoutMs: number;
  priority?: number;
  /** The job is deleted as it finishes (its end still reaches the event stream). */
  removeWhenDone?: boolean;
  /**
   * The wait also ends (as a timeout) when this aborts: the caller went away. A job whose answer
   * only its waiter can use (a face job: nothing is kept of it) should set `dropWhenUnwaited` too.
   */
  signal?: AbortSignal;
  /**
   * When the wait ends without an answer (timeout or `signal`), the job is taken off the queue if no
   * worker has started it, so it never runs for nobody. One already running finishes (bounded by its
   * own limits) and its answer is dropped.
   */
  dropWhenUnwaited?: boolean;
};

/** A wait registered by waitForJob. */
export type JobWait<N extends JobName> = { done: Promise<WaitOutcome<N>>; stop(): void };

export type Producer = {
  enqueue<N extends JobName>(name: N, payload: JobPayload<N>, opts: { jobId: string } & Partial<JobsOptions>): Promise<void>;
  /**
   * Adds the job and waits for its end. A timeout is an answer, not an error: the job goes on and
   * the caller falls back to the database, which is the truth.
   */
  enqueueAndWait<N extends JobName>(name: N, payload: JobPayload<N>, opts: WaitOptions): Promise<WaitOutcome<N>>;
  /**
   * Waits for the end of a job that someone else adds under `jobId` (a job a job queues): registered
   * at once, so call it BEFORE whatever leads to the job is queued, or its end may pass unseen. The
   * wait runs `timeoutMs` from now; `stop()` ends it (as a timeout) when it is no longer wanted. The
   * job's queue must be one this producer waits for.
   */
  waitForJob<N extends JobName>(name: N, jobId: string, timeoutMs: number): JobWait<N>;
  queue(name: QueueName): Queue;
  queues(): Queue[];
  /** Drops a queue's event-stream entries older than `olderThan`; resolves to how many went. */
  trimEvents(name: QueueName, olderThan: Date): Promise<number>;
  redis: RedisClient;
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

/**
 * `api` (the default) fails fast: a command issued while Redis is down rejects at once, so a request
 * answers 503 instead of hanging. `worker` waits for Redis to come back, so a worker's own enqueues,
 * its job schedulers and its maintenance survive a blip, as BullMQ recommends for workers.
 */
export type ProducerRole = 'api' | 'worker';

export async function createProducer(opts: {
  redis: RedisTarget;
  prefix: string;
  waitFor?: QueueName[];
  role?: ProducerRole;
  /** A worker's: told once when Redis cannot be reached at the start (the producer waits for it). */
  unreachable?: (err: unknown) => void;
  /** Where the producer's connection says it failed and came back (see reportConnection). */
  logger?: Logger;
}): Promise<Producer> {
  const worker = opts.role === 'worker';
  const redis = worker ? createWorkerRedis(opts.redis) : createApiRedis(opts.redis);
  if (opts.logger) reportConnection(redis, opts.logger, 'queue producer');
  if (redis.status !== 'ready') {
    // An API process refuses to start without Redis (it would answer nothing but 503s). A worker
    // waits for it, however long, instead of exiting: its webhook dispatcher already delivers from
    // PostgreSQL meanwhile, and a supervisor restarting it in a loop would gain nothing.
    let told = false;
    const waiting = (err: unknown) => {
      if (!told) opts.unreachable?.(err);
      told = true;
    };
    await new Promise<void>((resolve, reject) => {
      redis.once('ready', () => {
        redis.off('error', waiting);
        resolve();
      });
      if (worker) redis.on('error', waiting);
      else redis.once('error', reject);
    });
  }
  const queues = new Map<QueueName, Queue>();
  for (const q of Object.values(QUEUES)) {
    const queue = new Queue(q, { connection: redis, prefix: queuePrefix(opts.prefix, q) });
    // A lost connection is said by the connection's own report (reportConnection); anything else is
    // logged here (BullMQ would print each error to stderr when nobody listens).
    queue.on('error', (err) => {
      if (!isUnavailable(err)) opts.logger?.warn({ queue: q, err: describe(err) }, 'queue error');
    });
    queues.set(q, queue);
  }

  // One QueueEvents per waited-on queue per process, and one waiter map instead of a listener per
  // request: listeners per wait trip MaxListenersExceeded and cost CPU under load.
  const waiters = new Map<string, Waiter>();
  const events: QueueEvents[] = [];
  const readers: RedisClient[] = [];
  for (const q of opts.waitFor ?? []) {
    // A connection that waits for Redis however long (blocking reads need no offline failures):
    // BullMQ reads on a copy of it, so this one only lends its options.
    const blocking = createWorkerRedis(opts.redis);
    // Start reading from the stream's current last entry rather than '$': QueueEvents reports ready
    // before its first XREAD, and a job finishing in that gap would otherwise never be seen.
    const last = (await redis.xrevrange(queues.get(q)!.toKey('events'), '+', '-', 'COUNT', 1))[0]?.[0] ?? '0-0';
    const qe = new QueueEvents(q, { connection: blocking, prefix: queuePrefix(opts.prefix, q), lastEventId: last, autorun: true });
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
      // Reconnects by itself (its connection's report says so); waits in flight fall back to the database when they time out.
    });
    await qe.waitUntilReady();
    // BullMQ types its client as an interface; it is the ioredis copy it made of `blocking`.
    const reader = (await qe.getBackend().client) as unknown as RedisClient;
    blocking.disconnect();
    if (opts.logger) reportConnection(reader, opts.logger, `queue events ${q}`);
    readers.push(reader);
    events.push(qe);
  }

  const queueFor = (name: JobName): Queue => queues.get(JOBS[name].queue)!;

  /** A waiter for one job id, running `timeoutMs` from now; `ended` runs once as it ends, however. */
  function register<N extends JobName>(name: N, jobId: string, timeoutMs: number, ended?: () => void): JobWait<N> {
    let timer: NodeJS.Timeout | undefined;
    let settleWaiter: ((outcome: WaitOutcome<JobName>) => void) | undefined;
    const done = new Promise<WaitOutcome<N>>((resolve) => {
      const settle = (outcome: WaitOutcome<JobName>) => {
        if (waiters.get(jobId)?.settle !== settle) return;
        waiters.delete(jobId);
        clearTimeout(timer);
        ended?.();
        resolve(outcome as WaitOutcome<N>);
      };
      settleWaiter = settle;
      waiters.set(jobId, { settle, name });
      timer = setTimeout(() => settle({ status: 'timeout' }), timeoutMs);
    });
    return { done, stop: () => settleWaiter?.({ status: 'timeout' }) };
  }

  return {
    redis,
    queue: (name) => queues.get(name)!,
    queues: () => [...queues.values()],
    trimEvents(name, olderThan) {
      // Stream ids start with the entry's time in milliseconds, so MINID cuts by age.
      return redis.xtrim(queues.get(name)!.toKey('events'), 'MINID', olderThan.getTime());
    },
    async enqueue(name, payload, jobOpts) {
      const data = JOBS[name].payload.parse(payload);
      await queueFor(name).add(name, data, { ...defaultJobOptions(name), ...jobOpts });
      leaveIntake();
    },
    waitForJob: (name, jobId, timeoutMs) => register(name, jobId, timeoutMs),
    async enqueueAndWait<N extends JobName>(name: N, payload: JobPayload<N>, o: WaitOptions): Promise<WaitOutcome<N>> {
      const data = JOBS[name].payload.parse(payload);
      const jobId = o.jobId;
      const gone = () => wait.stop();
      const wait = register(name, jobId, o.timeoutMs, () => o.signal?.removeEventListener('abort', gone));
      const done = wait.done;
      if (o.signal?.aborted) gone();
      else o.signal?.addEventListener('abort', gone, { once: true });
      try {
        const removal = o.removeWhenDone ? { removeOnComplete: true, removeOnFail: true } : {};
        const job = await queueFor(name).add(name, data, { ...defaultJobOptions(name), jobId, ...removal, ...(o.priority ? { priority: o.priority } : {}) });
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
        wait.stop();
        throw err;
      }
      // From here the request only waits: its heavy part (body, decoding, sealing, queuing) is over.
      leaveIntake();
      const outcome = await done;
      // After the add has returned, so a wait that ended during it still finds the job to drop.
      // Queue.remove leaves a job a worker holds (locked) alone and answers 0.
      if (outcome.status === 'timeout' && o.dropWhenUnwaited) await queueFor(name).remove(jobId).catch(() => 0);
      return outcome;
    },
    async close() {
      for (const w of waiters.values()) w.settle({ status: 'timeout' });
      // BullMQ's close waits for each connection's 'end', which a connection that is reconnecting
      // (Redis cut) never emits: the close hung, and the process with it. Bounded, then cut off.
      const graceful = Promise.allSettled([...events.map((e) => e.close()), ...[...queues.values()].map((q) => q.close())]);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([graceful, new Promise<void>((resolve) => (timer = setTimeout(resolve, GRACEFUL_CLOSE_MS)))]);
      clearTimeout(timer);
      for (const c of readers) c.disconnect();
      redis.disconnect();
    },
  };
}
