import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { waitForWorkers } from '../../bench/lib/stack.ts';
import { until, waitFor } from '../setup/wait.ts';
import { startChaosStack, type ChaosStack } from '../chaos/chaos-stack.ts';

// Events are written in the transaction of the change they report (an outbox:
// nothing is lost when Redis is down). A worker process started while Redis is unreachable must
// deliver what waits in PostgreSQL at once (the dispatcher needs PostgreSQL only), and start its
// queues once Redis is back, instead of exiting on the refused connection.

type Hook = { body: string; headers: Record<string, string> };

let chaos: ChaosStack;
beforeAll(async () => {
  chaos = await startChaosStack({ proxyRedis: true, workerProcesses: 0, env: { WEBHOOK_POLL_MS: '200' } });
});
afterAll(async () => chaos?.close());

it('When a worker starts while Redis is cut, then it delivers the waiting webhook events during the cut, and once Redis is back its queues start and new events are delivered too, none lost', async () => {
  const { stack } = chaos;
  const org = await stack.createOrg({ units: 1 });
  const name = `redis-down-${stack.config.REDIS_PREFIX.replace(/[^A-Za-z0-9]/g, '')}`.slice(0, 64);
  const endpoint = await stack.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url: `${stack.identitySim.url}/sandbox/hooks/${name}`, events: ['ping'] } });
  expect(endpoint.status, endpoint.text).toBe(201);
  // The API's own Redis connection fails fast (503) until it has reconnected: asked again until then.
  const ping = async () => {
    const r = await until(() => stack.api('POST', `/v1/webhook-endpoints/${endpoint.body.id}/test`, { token: org.admin.token }), (a) => a.status !== 503, 30_000);
    expect(r.status, r.text).toBe(202);
    return r.body.event_id as string;
  };
  const received = async () => {
    const hooks = ((await (await fetch(`${stack.identitySim.url}/sandbox/hooks/${name}`)).json()) as { data: Hook[] }).data;
    return new Set(hooks.map((h) => h.headers['idverify-event-id']));
  };
  // Written (committed) with no worker running: they wait in PostgreSQL.
  const before = [await ping(), await ping(), await ping()];
  expect((await received()).size).toBe(0);

  chaos.redisProxy!.cut();
  let worker;
  try {
    worker = await chaos.startWorker({ waitReady: false });
    await waitFor(async () => {
      const got = await received();
      return before.every((id) => got.has(id));
    }, {
      what: 'the waiting events delivered while Redis is cut',
      timeoutMs: 60_000,
      intervalMs: 100,
    });
    expect(chaos.redisProxy!.isCut).toBe(true);
    expect(worker.alive, worker.logs.slice(-10).join('\n')).toBe(true);
  } finally {
    chaos.redisProxy!.restore();
  }

  // Redis is back: the same process starts its queues (BullMQ workers seen in Redis).
  await waitForWorkers(chaos.directRedisUrl, stack.config.REDIS_PREFIX, worker, 60_000);
  const after = await ping();
  await waitFor(async () => (await received()).has(after), { what: 'an event written after Redis came back delivered', timeoutMs: 30_000, intervalMs: 100 });
  // A job through the queues too: a live verification is looked up by this worker.
  const live = await until(() => stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '23456789012', reason: 'corporate' } }), (a) => a.status !== 503, 30_000);
  expect(live.status, live.text).toBe(200);
  // A receipt comes before the worker records it: wait for the records, then none lost, none left.
  const states = () => stack.db.any(sql.type(z.object({ status: z.string(), n: z.number() }))`SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status`);
  const final = await until(states, (rows) => rows.length === 1 && rows[0]!.status === 'delivered', 30_000);
  expect(final).toEqual([{ status: 'delivered', n: 4 }]);
});
