import { Queue, UnrecoverableError } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES, queuePrefix, type QueueName } from '../../src/jobs/catalog.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { PROCESSORS, startWorkers, type RunningWorkers } from '../../workers/main.ts';
import type { ProcessorMap } from '../../src/context.ts';
import { startStack, type Stack } from '../setup/harness.ts';
import { finishedJob } from '../setup/jobs.ts';

// The worker's dispatcher, through real BullMQ jobs on real queues: startWorkers as the worker
// process runs it, jobs added to Redis as any producer (or an attacker with Redis access) would.
// No processor is called by hand here.

let stack: Stack;
let redis: Redis;
const queues = new Map<QueueName, Queue>();
const log = createLogger({ level: 'silent' });
let running: RunningWorkers | null = null;

beforeAll(async () => {
  stack = await startStack({ workers: false });
  redis = new Redis(stack.config.REDIS_URL, { maxRetriesPerRequest: 3 });
  for (const name of Object.values(QUEUES)) queues.set(name, new Queue(name, { connection: redis, prefix: queuePrefix(stack.config.REDIS_PREFIX, name) }));
});
afterEach(async () => {
  await running?.close();
  running = null;
});
afterAll(async () => {
  await Promise.all([...queues.values()].map((q) => q.close()));
  redis?.disconnect();
  await stack?.close();
});

const start = async (processors: ProcessorMap = PROCESSORS) => {
  running = await startWorkers(stack.config, log, { processors, schedules: false });
  return running;
};

let n = 0;
/** Adds a job straight to a queue, bypassing the producer's own payload check. */
async function add(queue: QueueName, name: string, data: unknown, opts: { attempts?: number } = {}): Promise<string> {
  const jobId = `dispatch-test-${++n}-${Date.now()}`;
  await queues.get(queue)!.add(name, data, { jobId, attempts: opts.attempts ?? 5, backoff: { type: 'fixed', delay: 10 } });
  return jobId;
}

describe('worker dispatcher', () => {
  it('When a job has no processor, then the workers refuse to start', async () => {
    const { 'ledger.audit': _audit, 'outbox.deliver': _deliver, ...incomplete } = PROCESSORS;
    await expect(startWorkers(stack.config, log, { processors: incomplete, schedules: false })).rejects.toThrow('no processor for job(s): outbox.deliver, ledger.audit');
  });

  it('When a job carries a payload its schema refuses, then it fails at once as unrecoverable, without retries', async () => {
    await start();
    const bad = await add(QUEUES.credits, 'topup.credit', { reference: 'TOP-1-notahexreference', source: 'webhook' });
    const extra = await add(QUEUES.lookups, 'verification.lookup', { referenceId: 'REF-lowercase!' });
    for (const [id, queue, name] of [[bad, QUEUES.credits, 'topup.credit'], [extra, QUEUES.lookups, 'verification.lookup']] as const) {
      const job = await finishedJob(stack, queue, id);
      expect(job).toMatchObject({ state: 'failed', attemptsMade: 1, failedReason: `invalid payload for ${name}` });
    }
  });

  it('When a job name is unknown, or a known job arrives on another queue, then it fails at once as unrecoverable', async () => {
    await start();
    const unknown = await add(QUEUES.credits, 'topup.steal', { reference: 'TOP-1-0123456789abcdef', source: 'webhook' });
    const misplaced = await add(QUEUES.emails, 'topup.credit', { reference: 'TOP-1-0123456789abcdef', source: 'webhook' });
    expect(await finishedJob(stack, QUEUES.credits, unknown)).toMatchObject({ state: 'failed', attemptsMade: 1, failedReason: 'unknown job topup.steal on credits' });
    expect(await finishedJob(stack, QUEUES.emails, misplaced)).toMatchObject({ state: 'failed', attemptsMade: 1, failedReason: 'unknown job topup.credit on emails' });
  });

  it("When a processor throws UnrecoverableError, then the job fails on that attempt and is not retried", async () => {
    let calls = 0;
    await start({
      ...PROCESSORS,
      'outbox.sweep': async () => {
        calls++;
        throw new UnrecoverableError('this cannot get better');
      },
    });
    const id = await add(QUEUES.maintenance, 'outbox.sweep', {});
    expect(await finishedJob(stack, QUEUES.maintenance, id)).toMatchObject({ state: 'failed', attemptsMade: 1, failedReason: 'this cannot get better' });
    expect(calls).toBe(1);
  });

  it('When a processor throws an ordinary error, then the job is retried up to its attempts, and succeeds once the fault is gone', async () => {
    let calls = 0;
    await start({
      ...PROCESSORS,
      'outbox.sweep': async () => {
        calls++;
        if (calls < 3) throw new Error(`flaky ${calls}`);
        return { enqueued: 7 };
      },
      'retention.erase': async () => {
        throw new Error('always down');
      },
    });
    const flaky = await add(QUEUES.maintenance, 'outbox.sweep', {}, { attempts: 5 });
    expect(await finishedJob(stack, QUEUES.maintenance, flaky)).toMatchObject({ state: 'completed', attemptsMade: 3, returnvalue: { enqueued: 7 } });
    expect(calls).toBe(3);
    const down = await add(QUEUES.maintenance, 'retention.erase', {}, { attempts: 3 });
    expect(await finishedJob(stack, QUEUES.maintenance, down)).toMatchObject({ state: 'failed', attemptsMade: 3, failedReason: 'always down' });
  });

  it('When a processor returns a result its schema refuses, then the job does not complete with it', async () => {
    await start({ ...PROCESSORS, 'outbox.sweep': async () => ({ enqueued: 'many' }) as never });
    const id = await add(QUEUES.maintenance, 'outbox.sweep', {}, { attempts: 2 });
    const job = await finishedJob(stack, QUEUES.maintenance, id);
    expect(job).toMatchObject({ state: 'failed', attemptsMade: 2 });
    expect(job.returnvalue).toBeNull();
  });

  it('When a valid job runs through the real processor, then its typed result is the job result', async () => {
    await start();
    const id = await add(QUEUES.credits, 'topup.credit', { reference: 'TOP-424242-0123456789abcdef', source: 'verify' });
    expect(await finishedJob(stack, QUEUES.credits, id)).toMatchObject({ state: 'completed', attemptsMade: 1, returnvalue: { outcome: 'unknown_reference' } });
  });
});
