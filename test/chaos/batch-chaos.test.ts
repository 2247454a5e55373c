import { Redis } from 'ioredis';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterEach, expect, it } from 'vitest';
import { sleep } from '../../bench/lib/proc.ts';
import { waitFor } from '../setup/wait.ts';
import { startChaosStack, type ChaosStack } from './chaos-stack.ts';

const q = sql.type(z.record(z.string(), z.any()));
let chaos: ChaosStack | null = null;
afterEach(async () => {
  await chaos?.close();
  chaos = null;
});

const nin = (first: string, i: number) => `${first}${String(i).padStart(10, '0')}`;
// Found live, their duplicates, not found, fixtures: 560 rows, 450 distinct, 400 of them charged.
const ROWS = [
  ...Array.from({ length: 400 }, (_, i) => ({ nin: nin('3', i) })),
  ...Array.from({ length: 60 }, (_, i) => ({ nin: nin('3', i) })),
  ...Array.from({ length: 50 }, (_, i) => ({ nin: nin('0', i) })),
  ...Array.from({ length: 50 }, (_, i) => ({ nin: i % 2 ? '12345678901' : '99999999999' })),
];

// Short locks and a frequent stalled check: a killed worker's jobs come back within seconds.
const ENV = { RATE_LIMIT_PER_TOKEN: '1000000', RATE_LIMIT_PER_ORG: '1000000', WORKER_LOCK_MS: '4000', WORKER_STALLED_INTERVAL_MS: '2000', BATCH_FEED_CRON: '*/2 * * * * *' };

/** Starts the batch, waits until it runs, applies the fault, then checks every row ended once and was charged once. */
async function batchThrough(fault: (c: ChaosStack) => Promise<void>) {
  const c = chaos!;
  const org = await c.stack.createOrg({ units: 10_000 });
  const r = await c.stack.api('POST', '/v1/verify-nin/batches', { token: org.member.token, json: { reason: 'corporate', rows: ROWS } });
  expect(r.status).toBe(202);
  const id = r.body.id as string;
  for (let i = 0; i < 200; i++) {
    const decided = await c.stack.db.oneFirst(q`SELECT count(*)::int AS n FROM verifications WHERE batch_id = ${id} AND status <> 'pending'`);
    if (decided >= 40) break;
    await sleep(100);
  }
  await fault(c);
  const report = await c.invariants({ settleMs: 180_000, processor: false });
  const b = await c.stack.api('GET', `/v1/verify-nin/batches/${id}`, { token: org.member.token });
  expect(b.body).toMatchObject({ status: 'completed', total: 560, done: 560, found: 460 + 25, not_found: 50 + 25, failed: 0, invalid: 0, cancelled: 0, units_charged: 400 });
  expect(await c.stack.db.oneFirst(q`SELECT count(*)::int AS n FROM wallet_transactions WHERE org_id = ${org.orgId} AND kind = 'verification'`)).toBe(400);
  expect(await c.stack.db.one(q`SELECT units::int, reserved::int FROM wallets WHERE org_id = ${org.orgId}`)).toEqual({ units: 10_000 - 400, reserved: 0 });
  expect(report.stats.batches).toBe(1);
}

it('When the worker is SIGKILLed twice mid-batch, then every row ends exactly once and every found live row is charged exactly once', async () => {
  chaos = await startChaosStack({ simLatencyMs: 120, workerProcesses: 1, captureLogs: true, env: ENV });
  await batchThrough(async (c) => {
    for (let k = 0; k < 2; k++) {
      await c.killWorkers();
      await sleep(300);
      await c.startWorker({ waitReady: false });
      await sleep(1500);
    }
  });
});

it('When Redis is cut for a few seconds mid-batch, then the batch completes with every row ended and charged once', async () => {
  chaos = await startChaosStack({ proxyRedis: true, simLatencyMs: 60, workerProcesses: 1, captureLogs: true, env: ENV });
  await batchThrough(async (c) => {
    c.redisProxy!.cut();
    await sleep(4000);
    c.redisProxy!.restore();
  });
});

it('When PostgreSQL is cut for a few seconds mid-batch, then the batch completes with every row ended and charged once', async () => {
  chaos = await startChaosStack({ proxyPostgres: true, simLatencyMs: 60, workerProcesses: 1, captureLogs: true, env: ENV });
  await batchThrough(async (c) => {
    c.pgProxy!.cut();
    await sleep(4000);
    c.pgProxy!.restore();
  });
});

it('When a vNIN batch runs on two workers while another organisation bursts and the workers are SIGKILLed, then no token is sent twice, every row ends once, found rows are charged once and the burst is served', async () => {
  chaos = await startChaosStack({ simLatencyMs: 120, workerProcesses: 2, captureLogs: true, env: ENV });
  const c = chaos;
  const owner = await c.stack.createOrg({ units: 1_000 });
  const other = await c.stack.createOrg({ units: 1_000 });
  const tokens: string[] = [];
  for (let i = 0; i < 40; i++) {
    const res = await fetch(`${c.stack.identitySim.url}/sandbox/vnin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ nin: nin('5', i), enterprise_code: c.stack.config.nimcEnterpriseCode }),
    });
    expect(res.status).toBe(201);
    tokens.push(((await res.json()) as { vnin: string }).vnin);
  }
  const rows = [...tokens.map((vnin) => ({ vnin })), ...Array.from({ length: 20 }, (_, i) => ({ nin: nin('3', 900 + i) }))];
  const r = await c.stack.api('POST', '/v1/verify-nin/batches', { token: owner.member.token, json: { reason: 'corporate', rows } });
  expect(r.status).toBe(202);
  const id = r.body.id as string;
  // The other organisation's burst, answered synchronously while the batch runs.
  const burst = Promise.all(Array.from({ length: 40 }, (_, i) => c.stack.api('POST', '/v1/verify-nin', { token: other.member.token, json: { nin: nin('4', 900 + i), reason: 'corporate' } })));
  // Mid-batch: some rows ended, the rest still to come (a timeout here fails the test).
  await waitFor(async () => (await c.stack.db.oneFirst(q`SELECT count(*)::int AS n FROM verifications WHERE batch_id = ${id} AND status <> 'pending'`)) >= 10, {
    what: 'ten of the batch rows ended',
    timeoutMs: 20_000,
    intervalMs: 100,
  });
  // killWorkers resolves once every worker process has exited.
  await c.killWorkers();
  await c.startWorker({ waitReady: false });
  await c.startWorker({ waitReady: false });
  // The burst is answered; a call caught by the kill answers as the contract says for a lost lookup
  // (504 with its reference) or for the failures it causes (502, or 503 while the circuit is open),
  // never a 500; the invariants below check that none of them was charged unless found.
  const answers = await burst;
  for (const a of answers) expect([200, 502, 503, 504], JSON.stringify(a.body)).toContain(a.status);
  expect(answers.some((a) => a.status === 200)).toBe(true);
  const report = await c.invariants({ settleMs: 180_000, processor: false });
  expect(report.stats.batches).toBe(1);
  const b = await c.stack.api('GET', `/v1/verify-nin/batches/${id}`, { token: owner.member.token });
  expect(b.body).toMatchObject({ status: 'completed', total: 60, done: 60, not_found: 0, invalid: 0, cancelled: 0 });
  // A token sent twice would come back vnin_used: none did. A row whose call was cut by the kill
  // ends failed (one attempt), its unit given back; every found row is charged once.
  expect(b.body.found + b.body.failed).toBe(60);
  const page = await c.stack.api('GET', `/v1/verify-nin/batches/${id}/results`, { token: owner.member.token, headers: { accept: 'application/json' } });
  const failedDetails = page.body.data.filter((d: { status: string }) => d.status === 'failed').map((d: { detail: string }) => d.detail);
  for (const d of failedDetails) expect(['upstream_unavailable', 'lookup_abandoned']).toContain(d);
  expect(b.body.units_charged).toBe(b.body.found);
  expect(await c.stack.db.one(q`SELECT units::int, reserved::int FROM wallets WHERE org_id = ${owner.orgId}`)).toEqual({ units: 1_000 - b.body.found, reserved: 0 });
  // Every token left Redis: the batch's hash is gone once it ended.
  const redis = new Redis(c.stack.config.REDIS_URL);
  try {
    expect(await redis.exists(`${c.stack.config.REDIS_PREFIX}:batch-vnin:${id}`)).toBe(0);
  } finally {
    redis.disconnect();
  }
});
