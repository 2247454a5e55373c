import { Queue, QueueEvents, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { connectionString } from '../../src/lib/redis.ts';

/**
 * The ceiling of a queue round trip on this machine: `node bench/ceilings/bullmq-noop.ts worker`
 * runs a no-op worker (concurrency 50) in one process; `... callers` runs 200 callers in another,
 * each adding a job and waiting for its completion event, as the API waits for a lookup (one shared
 * QueueEvents and a waiter map, no listener per wait). The callers print one JSON line.
 * Env: REDIS_URL, PREFIX, CALLERS (200), CONCURRENCY (50), DURATION_S, WARMUP_S.
 */
const env = process.env;
const redisUrl = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = env.PREFIX ?? 'idvbench-noop';
const QUEUE = 'noop';
const connection = () => new Redis(connectionString(redisUrl), { maxRetriesPerRequest: null });

if (process.argv[2] === 'worker') {
  const worker = new Worker(QUEUE, async () => null, { connection: connection(), prefix, concurrency: Number(env.CONCURRENCY ?? 50) });
  await worker.waitUntilReady();
  process.stdout.write('ready\n');
  process.once('SIGTERM', () => void worker.close().finally(() => process.exit(0)));
} else {
  const callers = Number(env.CALLERS ?? 200);
  const durationS = Number(env.DURATION_S ?? 10);
  const warmupS = Number(env.WARMUP_S ?? 2);
  const client = connection();
  const queue = new Queue(QUEUE, { connection: client, prefix });
  // As the service does: read the event stream from its current last entry (QueueEvents reports
  // ready before its first read, so '$' could miss a completion), and bound every wait.
  const last = (await client.xrevrange(queue.toKey('events'), '+', '-', 'COUNT', 1))[0]?.[0] ?? '0-0';
  const events = new QueueEvents(QUEUE, { connection: connection(), prefix, lastEventId: last });
  await events.waitUntilReady();
  const waiters = new Map<string, () => void>();
  events.on('completed', ({ jobId }) => waiters.get(jobId)?.());
  let seq = 0;
  let lost = 0;
  const latencies: number[] = [];
  let measuring = false;
  let stop = false;
  const roundTrip = async () => {
    const id = `n${process.pid}-${seq++}`;
    const t0 = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const done = new Promise<boolean>((resolve) => {
      waiters.set(id, () => resolve(true));
      timer = setTimeout(() => resolve(false), 10_000);
    });
    await queue.add('noop', {}, { jobId: id, removeOnComplete: true, removeOnFail: true });
    const seen = await done;
    clearTimeout(timer);
    waiters.delete(id);
    if (!seen) lost++;
    else if (measuring) latencies.push(performance.now() - t0);
  };
  for (let c = 0; c < callers; c++) {
    void (async () => {
      while (!stop) await roundTrip();
    })();
  }
  await new Promise((r) => setTimeout(r, warmupS * 1000));
  measuring = true;
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, durationS * 1000));
  measuring = false;
  const elapsedS = (performance.now() - t0) / 1000;
  stop = true;
  latencies.sort((a, b) => a - b);
  const at = (p: number) => Math.round((latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)] ?? 0) * 100) / 100;
  process.stdout.write(`${JSON.stringify({ callers, lost, roundTrips: latencies.length, throughput: Math.round((latencies.length / elapsedS) * 10) / 10, p50: at(50), p99: at(99) })}\n`);
  // Round trips still in flight are abandoned: the runner deletes the prefix.
  process.exit(0);
}
