import { randomBytes } from 'node:crypto';
import { sql } from 'slonik';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

// Fairness between organisations: a cap on deliveries in flight per organisation,
// in the claim statement. A stack with few sockets (4) and a per-organisation cap of 2: without the cap
// one organisation's held requests take every socket and the other's delivery waits for them.

const HOLD_MS = 12_000;
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    env: { WEBHOOK_CONCURRENCY: '4', WEBHOOK_MAX_IN_FLIGHT_PER_ORG: '2', WEBHOOK_POLL_MS: '200', WEBHOOK_TIMEOUT_MS: String(HOLD_MS + 5000) },
  });
});
afterAll(async () => stack?.close());

type Hook = { received_at: string; headers: Record<string, string>; body: string };
const hookUrl = (name: string, query = '') => `${stack.identitySim.url}/sandbox/hooks/${name}${query}`;
const newName = () => `f-${randomBytes(5).toString('hex')}`;
async function received(name: string): Promise<Hook[]> {
  const r = await fetch(hookUrl(name));
  return ((await r.json()) as { data: Hook[] }).data;
}
async function register(org: OrgFixture, url: string): Promise<string> {
  const r = await stack.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url, events: ['ping'] } });
  expect(r.status).toBe(201);
  return (r.body as { id: string }).id;
}
async function ping(org: OrgFixture, endpointId: string): Promise<void> {
  expect((await stack.api('POST', `/v1/webhook-endpoints/${endpointId}/test`, { token: org.admin.token })).status).toBe(202);
}

it("When one organisation's receivers on several endpoints hold every request, then it has at most WEBHOOK_MAX_IN_FLIGHT_PER_ORG open and another organisation's delivery is received while they still hold", async () => {
  const slow = await stack.createOrg();
  const names = [newName(), newName(), newName()];
  const ids: string[] = [];
  for (const name of names) ids.push(await register(slow, hookUrl(name, `?delay_ms=${HOLD_MS}`)));
  for (const id of ids) {
    await ping(slow, id);
    await ping(slow, id);
  }
  const slowReceived = async () => (await Promise.all(names.map(received))).reduce((n, l) => n + l.length, 0);
  // The held requests have reached A's receivers (as many as A may have open).
  await waitFor(async () => (await slowReceived()) >= 2, { what: "the slow organisation's receivers holding requests" });

  const other = await stack.createOrg();
  const name = newName();
  await ping(other, await register(other, hookUrl(name)));
  await waitFor(async () => (await received(name)).length > 0, { what: "the other organisation's ping", timeoutMs: 30_000 });

  // Observed after B's receipt: none of A's tries has ended (its receivers still hold them all), and
  // A had only its cap of requests opened, though it had 6 due on 3 endpoints and 4 sockets existed.
  const q = sql.type(z.object({ delivered: z.number(), answered: z.number(), leased: z.number() }));
  const a = await stack.db.one(q`
    SELECT count(*) FILTER (WHERE status = 'delivered')::int AS delivered,
           count(*) FILTER (WHERE last_status_code IS NOT NULL OR last_error IS NOT NULL)::int AS answered,
           count(*) FILTER (WHERE status = 'pending' AND lease_until > now())::int AS leased
    FROM webhook_deliveries WHERE endpoint_id = ANY (${sql.array(ids, 'text')})`);
  expect(a, "the slow organisation's deliveries when the other's ping was received").toEqual({ delivered: 0, answered: 0, leased: 2 });
  expect(await slowReceived()).toBe(2);
});

it('When an organisation has WEBHOOK_MAX_ENDPOINTS (20) endpoints, switched off ones included, then one more is refused with 409 and a detail, and deleting one makes room', async () => {
  const org = await stack.createOrg();
  const ids: string[] = [];
  for (let i = 0; i < 19; i++) ids.push(await register(org, hookUrl(newName())));
  expect((await stack.api('PATCH', `/v1/webhook-endpoints/${ids[0]}`, { token: org.admin.token, json: { enabled: false } })).status).toBe(200);

  const create = () => stack.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url: hookUrl(newName()), events: ['ping'] } });
  expect((await create()).status).toBe(201);
  const refused = await create();
  expect(refused.status).toBe(409);
  expect(refused.body.detail).toMatch(/20 webhook endpoints/);
  expect((await stack.api('GET', '/v1/webhook-endpoints', { token: org.admin.token })).body.data).toHaveLength(20);
  // Another organisation is not counted with this one.
  const other = await stack.createOrg();
  await register(other, hookUrl(newName()));

  expect((await stack.api('DELETE', `/v1/webhook-endpoints/${ids[1]}`, { token: org.admin.token })).status).toBe(204);
  expect((await create()).status).toBe(201);
});
