import type { Job } from 'bullmq';
import { UnrecoverableError } from 'bullmq';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPaystackClient, ProcessorError } from '../../src/adapters/payment-processor/paystack.ts';
import { jobIds, QUEUES } from '../../src/jobs/catalog.ts';
import { createProducer, type Producer } from '../../src/jobs/producer.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { redisTarget } from '../../src/lib/redis.ts';
import { creditTopup } from '../../src/modules/topup/index.ts';
import { topupProcessors } from '../../workers/processors/topup.ts';
import { startStack, type Stack } from '../setup/harness.ts';

// Test queries read loosely typed rows; the service's own queries are the typed ones.
const q = sql.type(z.record(z.string(), z.any()));

let stack: Stack;
let producer: Producer;
const log = createLogger({ level: 'silent' });

beforeAll(async () => {
  stack = await startStack();
  // A producer of our own that waits on the credits queue: the jobs run in the stack's real workers.
  producer = await createProducer({ redis: redisTarget(stack.config), prefix: stack.config.REDIS_PREFIX, waitFor: [QUEUES.credits] });
});
afterAll(async () => {
  await producer?.close();
  await stack?.close();
});

let n = 0;
async function runCredit(reference: string, source: 'webhook' | 'verify' | 'sweep' = 'webhook') {
  const outcome = await producer.enqueueAndWait('topup.credit', { reference, source }, { jobId: `credit-test-${Date.now()}-${++n}`, timeoutMs: 8000 });
  if (outcome.status !== 'completed') throw new Error(`credit job ${outcome.status}`);
  return outcome.result;
}

async function initialize(token: string, units = 100) {
  const r = await stack.api('POST', '/v1/topup/initialize', { token, form: { units } });
  expect(r.status).toBe(200);
  return r.body as { reference: string; total_amount: number; base_amount: number };
}

async function simulator(reference: string, action: 'pay' | 'tamper', body: Record<string, unknown>) {
  const r = await fetch(`${stack.paymentSim.url}/__sim/transactions/${reference}/${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(r.status).toBe(200);
}

describe('topup.credit job', () => {
  it('When the reference is unknown, then the outcome says so and nothing happens', async () => {
    expect(await runCredit('TOP-424242-0123456789abcdef')).toEqual({ outcome: 'unknown_reference' });
  });

  it('When the checkout is unpaid, then not_paid with the processor status, and the row stays pending', async () => {
    const org = await stack.createOrg();
    const t = await initialize(org.admin.token);
    expect(await runCredit(t.reference, 'verify')).toEqual({ outcome: 'not_paid', processorStatus: 'abandoned' });
    expect(await stack.db.oneFirst(q`SELECT status FROM topups WHERE reference = ${t.reference}`)).toBe('pending');
  });

  it('When paid, then the first run credits and every later one reports the credit without repeating it', async () => {
    const org = await stack.createOrg({ units: 10 });
    const t = await initialize(org.admin.token, 300);
    await simulator(t.reference, 'pay', { webhook: 'none' });
    expect(await runCredit(t.reference)).toEqual({ outcome: 'credited', unitsAdded: 300, newBalance: 310, pricePaid: t.base_amount });
    expect(await runCredit(t.reference, 'verify')).toEqual({ outcome: 'already_credited', unitsAdded: 300, newBalance: 310, pricePaid: t.base_amount });
    const row = await stack.db.one(q`SELECT status, credited_at IS NOT NULL AS credited, paid_amount::int, paid_currency FROM topups WHERE reference = ${t.reference}`);
    expect(row).toEqual({ status: 'credited', credited: true, paid_amount: t.total_amount, paid_currency: 'NGN' });
    const metric = await stack.workers!.deps.metrics.registry.getSingleMetric('wallet_units_credited_total')!.get();
    expect(metric.values[0]!.value).toBeGreaterThanOrEqual(300);
  });

  it("When a top-up is credited, then its organisation's paused batches are woken: a batch.feed job for the organisation of the top-up's row", async () => {
    const org = await stack.createOrg({ units: 0 });
    const t = await initialize(org.admin.token, 200);
    await simulator(t.reference, 'pay', { webhook: 'none' });
    expect(await runCredit(t.reference)).toMatchObject({ outcome: 'credited' });
    const wake = await stack.workers!.deps.producer.queue(QUEUES.batches).getJob(jobIds.batchWake(org.orgId, t.reference));
    expect(wake).toMatchObject({ name: 'batch.feed', data: { orgId: org.orgId } });
  });

  it('When the processor reports a different amount, then nothing is credited and the top-up is held as amount_mismatch', async () => {
    const org = await stack.createOrg();
    const t = await initialize(org.admin.token);
    await simulator(t.reference, 'tamper', { amount: t.total_amount - 100 });
    // The webhook carries the tampered amount too; its job re-verifies and refuses.
    await simulator(t.reference, 'pay', {});
    const held = async () => stack.db.one(q`SELECT status, paid_amount::int, processor_status FROM topups WHERE reference = ${t.reference}`);
    const end = Date.now() + 8000;
    while ((await held()).status !== 'amount_mismatch' && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    expect(await held()).toEqual({ status: 'amount_mismatch', paid_amount: t.total_amount - 100, processor_status: 'success' });

    const v = await stack.api('POST', '/v1/topup/verify', { token: org.admin.token, form: { reference: t.reference } });
    expect(v.status).toBe(400);
    expect(v.body.detail).toBe('Paid amount does not match the top-up; nothing was credited');
    expect(await runCredit(t.reference)).toEqual({ outcome: 'amount_mismatch' });
    expect(await stack.db.oneFirst(q`SELECT count(*)::int FROM wallet_transactions WHERE reference = ${t.reference}`)).toBe(0);
    expect(await stack.db.oneFirst(q`SELECT units::int FROM wallets WHERE org_id = ${org.orgId}`)).toBe(0);
  });

  it('When the processor cannot be reached, then the job throws a retryable error; a refused key fails for good', async () => {
    const org = await stack.createOrg();
    const t = await initialize(org.admin.token);
    const deps = stack.workers!.deps;
    const down = { ...deps, processor: createPaystackClient({ baseUrl: 'http://127.0.0.1:1', secretKey: 'x', timeoutMs: 1000 }) };
    const err = await creditTopup(down, t.reference, 'webhook', log).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProcessorError);
    expect((err as ProcessorError).retryable).toBe(true);

    const wrongKey = { ...deps, processor: createPaystackClient({ baseUrl: stack.paymentSim.url, secretKey: 'sk_wrong', timeoutMs: 1000 }) };
    const job = {} as Job;
    await expect(topupProcessors['topup.credit']!({ reference: t.reference, source: 'webhook' }, job, wrongKey, log)).rejects.toBeInstanceOf(UnrecoverableError);
    expect(await stack.db.oneFirst(q`SELECT status FROM topups WHERE reference = ${t.reference}`)).toBe('pending');
  });
});
