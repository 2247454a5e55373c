// Waiting for the jobs that could change something, instead of sleeping and hoping they ran: a
// test that says "nothing was credited" first waits until every credit job that could have
// credited has finished, then looks.
import { createHash } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { jobIds, QUEUES, queuePrefix, type QueueName } from '../../src/jobs/catalog.ts';
import { waitFor } from './wait.ts';

type Where = { config: { REDIS_URL: string; REDIS_PREFIX: string } };

export type FinishedJob = { id: string; name: string; state: 'completed' | 'failed'; attemptsMade: number; returnvalue: any; failedReason: string; data: any };

const UNFINISHED = ['active', 'wait', 'waiting', 'delayed', 'prioritized', 'waiting-children'] as const;

async function withQueue<T>(where: Where, name: QueueName, fn: (q: Queue, redis: Redis) => Promise<T>): Promise<T> {
  const connection = new Redis(where.config.REDIS_URL, { maxRetriesPerRequest: 3 });
  const queue = new Queue(name, { connection, prefix: queuePrefix(where.config.REDIS_PREFIX, name) });
  try {
    return await fn(queue, connection);
  } finally {
    await queue.close();
    connection.disconnect();
  }
}

/** The credit job a signed webhook body enqueues: its id is built from the digest of the exact bytes. */
export function webhookCreditJobId(rawBody: string): string {
  return jobIds.creditFromWebhook(createHash('sha256').update(rawBody).digest('hex'));
}

/**
 * The ids of every job of `queue` whose payload matches, whatever its state. The state lists are read
 * in one MULTI (a consistent snapshot): read one by one, a job moving between them could be missed.
 */
async function jobIdsWhere(queue: Queue, redis: Redis, match: (data: any) => boolean): Promise<string[]> {
  const lists = ['wait', 'paused', 'active'].map((k) => queue.toKey(k));
  const sets = ['prioritized', 'delayed', 'waiting-children', 'completed', 'failed'].map((k) => queue.toKey(k));
  const tx = redis.multi();
  for (const k of lists) tx.lrange(k, 0, -1);
  for (const k of sets) tx.zrange(k, '0', '-1');
  const replies = (await tx.exec()) ?? [];
  const ids = new Set<string>();
  for (const [err, value] of replies) {
    if (err) throw err;
    for (const id of value as string[]) ids.add(id);
  }
  const out: string[] = [];
  for (const id of ids) {
    const data = await redis.hget(queue.toKey(id), 'data');
    if (data !== null && match(JSON.parse(data))) out.push(id);
  }
  return out;
}

async function ifFinished(queue: Queue, id: string): Promise<FinishedJob | null> {
  const state = await queue.getJobState(id);
  if (state !== 'completed' && state !== 'failed') return null;
  // Read after the state is final, so the result is there.
  const job = await queue.getJob(id);
  if (!job) return null;
  return { id, name: job.name, state, attemptsMade: job.attemptsMade, returnvalue: job.returnvalue, failedReason: job.failedReason ?? '', data: job.data };
}

/**
 * Waits until the job `id` on `queue` has finished for good (completed, or failed after its last
 * attempt) and returns it. A job that was never added fails the wait: the caller expected it.
 */
export async function finishedJob(where: Where, queue: QueueName, id: string, timeoutMs = 20_000): Promise<FinishedJob> {
  return withQueue(where, queue, (q) =>
    waitFor(
      () => ifFinished(q, id),
      { what: `job ${id} on ${queue} finished`, timeoutMs, intervalMs: 50 },
    ),
  );
}

/**
 * Waits until every credit job of `reference` (from a webhook, a verify call or a sweep) has
 * finished for good, and returns them. Call it after the requests that enqueue them were answered:
 * the service adds the job before it answers, so no job of that reference can appear later.
 */
export async function settledCreditJobs(where: Where, reference: string, timeoutMs = 20_000): Promise<FinishedJob[]> {
  return withQueue(where, QUEUES.credits, async (q, redis) => {
    const ids = await jobIdsWhere(q, redis, (data) => data?.reference === reference);
    const jobs: FinishedJob[] = [];
    for (const id of ids) jobs.push(await waitFor(() => ifFinished(q, id), { what: `credit job ${id} of ${reference} finished`, timeoutMs }));
    return jobs.sort((a, b) => a.id.localeCompare(b.id));
  });
}

/** Waits until no queue of the stack holds a job that is waiting, running or due for a retry, all at one look. */
export async function queuesIdle(where: Where, timeoutMs = 20_000): Promise<void> {
  const connection = new Redis(where.config.REDIS_URL, { maxRetriesPerRequest: 3 });
  const queues = Object.values(QUEUES).map((name) => new Queue(name, { connection, prefix: queuePrefix(where.config.REDIS_PREFIX, name) }));
  try {
    await waitFor(
      async () => {
        for (const q of queues) {
          const counts = await q.getJobCounts(...UNFINISHED);
          if (Object.values(counts).some((n) => n > 0)) return false;
        }
        return true;
      },
      { what: 'every queue idle', timeoutMs },
    );
  } finally {
    await Promise.all(queues.map((q) => q.close()));
    connection.disconnect();
  }
}
