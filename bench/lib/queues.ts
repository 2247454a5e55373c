import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { sleep, type NodeChild } from './proc.ts';
import { queuePrefix, type QueueName } from '../../src/jobs/catalog.ts';
import { connectionString } from '../../src/lib/redis.ts';

/** BullMQ names each worker's connection; the worker process is ready once both busy queues show one. */
export async function waitForWorkers(redisUrl: string, prefix: string, child: NodeChild, timeoutMs = 30_000): Promise<void> {
  const redis = new Redis(connectionString(redisUrl), { maxRetriesPerRequest: 2 });
  const queues = (['lookups', 'credits'] as const).map((q) => new Queue(q, { connection: redis, prefix: queuePrefix(prefix, q) }));
  try {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!child.alive) throw new Error(`worker exited while starting:\n${child.logs.slice(-20).join('\n')}`);
      const counts = await Promise.all(queues.map((q) => q.getWorkersCount()));
      if (counts.every((n) => n > 0)) return;
      await sleep(100);
    }
    throw new Error(`workers not ready in ${timeoutMs} ms:\n${child.logs.slice(-20).join('\n')}`);
  } finally {
    await Promise.all(queues.map((q) => q.close()));
    redis.disconnect();
  }
}

export type JobTimings = { jobs: number; waitMs: Percentiles; runMs: Percentiles; totalMs: Percentiles };
type Percentiles = { p50: number; p95: number; p99: number };

function percentiles(xs: number[]): Percentiles {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? 0;
  return { p50: at(50), p95: at(95), p99: at(99) };
}

/**
 * From BullMQ's own timestamps of completed jobs: wait = added -> picked up by a worker, run =
 * picked up -> finished (upstream call and settlement included). Millisecond resolution.
 */
export async function jobTimings(redisUrl: string, prefix: string, queueName: string, since = 0): Promise<JobTimings> {
  const redis = new Redis(connectionString(redisUrl), { maxRetriesPerRequest: 2 });
  const queue = new Queue(queueName, { connection: redis, prefix: queuePrefix(prefix, queueName as QueueName) });
  try {
    const jobs = (await queue.getJobs(['completed'], 0, 4999)).filter((j) => j.timestamp >= since && j.processedOn && j.finishedOn);
    return {
      jobs: jobs.length,
      waitMs: percentiles(jobs.map((j) => j.processedOn! - j.timestamp)),
      runMs: percentiles(jobs.map((j) => j.finishedOn! - j.processedOn!)),
      totalMs: percentiles(jobs.map((j) => j.finishedOn! - j.timestamp)),
    };
  } finally {
    await queue.close();
    redis.disconnect();
  }
}

export async function settleQueues(redisUrl: string, prefix: string, timeoutMs: number): Promise<Record<string, number>> {
  const redis = new Redis(connectionString(redisUrl), { maxRetriesPerRequest: 2 });
  const queues = (['lookups', 'credits'] as const).map((q) => new Queue(q, { connection: redis, prefix: queuePrefix(prefix, q) }));
  try {
    const deadline = Date.now() + timeoutMs;
    let counts: Record<string, number> = {};
    while (Date.now() < deadline) {
      counts = {};
      for (const q of queues) {
        const c = await q.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'completed', 'failed');
        for (const [k, v] of Object.entries(c)) counts[`${q.name}.${k}`] = v;
      }
      const busy = Object.entries(counts).filter(([k]) => /\.(wait|active|delayed|prioritized)$/.test(k)).reduce((a, [, v]) => a + v, 0);
      if (busy === 0) return counts;
      await sleep(200);
    }
    return counts;
  } finally {
    await Promise.all(queues.map((q) => q.close()));
    redis.disconnect();
  }
}
