import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOBS, QUEUES, SCHEDULES, queuePrefix, type JobName } from '../../src/jobs/catalog.ts';
import { createProducer, type Producer } from '../../src/jobs/producer.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { redisTarget } from '../../src/lib/redis.ts';
import { createUser } from '../../src/modules/organisations/index.ts';
import { startWorkers } from '../../workers/main.ts';
import { startStack, type Stack } from '../setup/harness.ts';
import { until } from '../setup/wait.ts';
import { clusterToolsPresent, startLocalCluster, type LocalCluster } from './local-cluster.ts';

// The whole service on a Redis Cluster of three masters started for this file. Where redis-server
// is missing the file is skipped on a developer's machine, but CI (.ci/run sets IDV_CLUSTER_TEST)
// fails instead: a cluster test that silently does not run proves nothing.
const present = clusterToolsPresent();
const required = process.env.IDV_CLUSTER_TEST === 'required' || !!process.env.CI;

let cluster: LocalCluster;
let stack: Stack;
let producer: Producer;

const balance = async (token: string): Promise<number> => (await stack.api('GET', '/v1/me', { token })).body.organisation.units;

async function payTopup(token: string, units: number, webhook: 'normal' | 'none'): Promise<string> {
  const init = await stack.api('POST', '/v1/topup/initialize', { token, form: { units } });
  expect(init.status).toBe(200);
  const paid = await fetch(`${stack.paymentSim.url}/__sim/transactions/${init.body.reference}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ webhook }),
  });
  expect(paid.status).toBe(200);
  return init.body.reference as string;
}

describe.skipIf(!present && !required)('on a Redis Cluster of three masters', () => {
  beforeAll(async () => {
    if (!present) throw new Error('redis-server and redis-cli are required for the Redis Cluster test');
    cluster = await startLocalCluster(3);
    stack = await startStack({
      // The sweep may take a paid top-up at once, so that it has something to credit.
      env: { REDIS_CLUSTER_NODES: cluster.nodes.join(','), TOPUP_SWEEP_MIN_AGE_SECONDS: '0' },
    });
    producer = await createProducer({ redis: redisTarget(stack.config), prefix: stack.config.REDIS_PREFIX, waitFor: [QUEUES.maintenance, QUEUES.batches] });
  });
  afterAll(async () => {
    await producer?.close();
    await stack?.close();
    await cluster?.stop();
  });

  it('When a live and a fixture NIN are verified, then both answer 200 and only the live one is charged', async () => {
    // Each test has an organisation of its own: the tests pass in any order.
    const org = await stack.createOrg({ units: 3 });
    const live = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '31415926535', reason: 'corporate' } });
    expect(live.status).toBe(200);
    expect(live.body.data.nin).toBe('31415926535');
    const fixture = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '12345678901', reason: 'corporate' } });
    expect(fixture.status).toBe(200);
    expect(fixture.body.data.nin).toBe('12345678901');
    expect(await balance(org.admin.token)).toBe(2);
  });

  it('When a top-up is paid at the payment simulator, then its webhook credits the wallet through the credits queue', async () => {
    const org = await stack.createOrg({ units: 2 });
    await payTopup(org.admin.token, 100, 'normal');
    expect(await until(() => balance(org.admin.token), (u) => u > 2)).toBe(102);
  });

  it('When the worker registers its schedules and each scheduled job is run through its queue, then every sweep completes and the top-up sweep credits a payment whose webhook never came', async () => {
    const org = await stack.createOrg({ units: 102 });
    const scheduler = await startWorkers(stack.config, createLogger({ level: 'error' }), { schedules: true });
    try {
      // Each schedule lives on its job's own queue (batch.feed on batches, the sweeps on maintenance).
      const registered = (await Promise.all(Object.values(QUEUES).map((q) => producer.queue(q).getJobSchedulers()))).flat();
      expect(registered.map((s) => s.key).sort()).toEqual(Object.keys(SCHEDULES).sort());
    } finally {
      await scheduler.close();
    }
    // The schedules go before the jobs are run by hand: a scheduled top-up sweep run by the stack's
    // own workers could otherwise credit the payment first, and the sweep below find nothing to credit.
    for (const q of Object.values(QUEUES)) {
      for (const s of await producer.queue(q).getJobSchedulers()) await producer.queue(q).removeJobScheduler(s.key);
    }

    const reference = await payTopup(org.admin.token, 100, 'none');
    const results: Partial<Record<JobName, unknown>> = {};
    for (const name of Object.keys(SCHEDULES) as (keyof typeof SCHEDULES)[]) {
      const outcome = await producer.enqueueAndWait(name, {}, { jobId: `cluster-${name.replace('.', '-')}-${randomBytes(3).toString('hex')}`, timeoutMs: 20_000 });
      expect(outcome.status, name).toBe('completed');
      if (outcome.status === 'completed') results[name] = JOBS[name].result.parse(outcome.result);
    }
    expect(results['topup.sweep']).toMatchObject({ checked: 1, credited: 1 });
    expect(results['ledger.audit']).toMatchObject({ mismatches: 0 });
    expect(results['verification.sweep']).toEqual({ requeued: 0, released: 0 });
    expect(await balance(org.admin.token)).toBe(202);
    const row = await stack.api('POST', '/v1/topup/verify', { token: org.admin.token, form: { reference } });
    expect(row.status).toBe(200);
    expect(row.body.message).toBe('Top-up already credited');
  });

  it('When a platform administrator opens the queue board, then it is served and lists every queue with its counts', async () => {
    const admin = { username: `ops-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
    await createUser(stack.db, { orgId: null, ...admin, role: 'platform_admin' });
    const token = await stack.login(admin.username, admin.password);
    const page = await stack.api('GET', '/admin/queues', { token });
    expect(page.status).toBe(200);
    const api = await stack.api('GET', '/admin/queues/api/queues', { token });
    expect(api.status).toBe(200);
    expect((api.body.queues as { name: string }[]).map((q) => q.name).sort()).toEqual(Object.values(QUEUES).sort());
  });

  it("When the work is done, then each queue's keys sit on one master, the queues on at least two, and the service's keys on at least two", async () => {
    // Work of its own first (a live lookup writes the authority's shared state), so the test passes in any order.
    const org = await stack.createOrg({ units: 1 });
    expect((await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '27182818284', reason: 'corporate' } })).status).toBe(200);
    const prefix = stack.config.REDIS_PREFIX;
    const byMaster = await cluster.keysByMaster(`${prefix}*`);
    const mastersWith = (test: (key: string) => boolean) => [...byMaster].filter(([, keys]) => keys.some(test)).map(([port]) => port);

    expect(mastersWith(() => true).length).toBeGreaterThanOrEqual(2);
    const queueMasters = new Set<number>();
    for (const queue of Object.values(QUEUES)) {
      const own = mastersWith((k) => k.startsWith(`${queuePrefix(prefix, queue)}:${queue}:`));
      // One hash tag per queue: all of a queue's keys in one slot, so on exactly one master.
      expect(own, queue).toHaveLength(1);
      queueMasters.add(own[0]!);
    }
    expect(queueMasters.size).toBeGreaterThanOrEqual(2);
    // The identity authority's shared state (fair share, call spacing, breaker) keeps one tag too.
    expect(mastersWith((k) => k.startsWith(`${prefix}:{authority}:`))).toHaveLength(1);
  });
});
