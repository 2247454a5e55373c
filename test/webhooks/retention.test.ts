// The retention of the webhook deliveries log (job webhooks.prune, on RETENTION_CRON).
import { randomBytes } from 'node:crypto';
import type { Job } from 'bullmq';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SCHEDULES } from '../../src/jobs/catalog.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { PROCESSORS } from '../../workers/main.ts';
import type { WorkerDeps } from '../../src/context.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

const log = createLogger({ level: 'silent' });
const prune = PROCESSORS['webhooks.prune']!;

let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack({ env: { WEBHOOK_POLL_MS: '100' } });
  org = await stack.createOrg({ units: 0 });
});
afterAll(async () => stack?.close());

type Delivery = { id: string; event_id: string; status: string };
const deliveries = async (endpointId: string): Promise<Delivery[]> =>
  (await stack.api('GET', `/v1/webhook-endpoints/${endpointId}/deliveries?limit=100`, { token: org.admin.token })).body.data;
const eventIds = () => stack.db.anyFirst(sql.type(z.object({ id: z.string() }))`SELECT id FROM webhook_events WHERE org_id = ${org.orgId} ORDER BY id`);

/** A ping sent and delivered; its event id. */
async function deliveredPing(endpointId: string): Promise<string> {
  const sent = await stack.api('POST', `/v1/webhook-endpoints/${endpointId}/test`, { token: org.admin.token });
  expect(sent.status).toBe(202);
  const eventId = sent.body.event_id as string;
  await waitFor(async () => (await deliveries(endpointId)).find((d) => d.event_id === eventId && d.status === 'delivered'), { what: `${eventId} delivered`, timeoutMs: 20_000 });
  return eventId;
}

/** Moves an event and its first delivery (not a redelivery) `days` into the past. */
async function age(eventId: string, days: number): Promise<void> {
  await stack.db.query(sql.unsafe`UPDATE webhook_events SET created_at = created_at - make_interval(days => ${days}) WHERE id = ${eventId}`);
  await stack.db.query(sql.unsafe`
    UPDATE webhook_deliveries SET created_at = created_at - make_interval(days => ${days}),
      delivered_at = delivered_at - make_interval(days => ${days}) WHERE event_id = ${eventId} AND redelivery_of IS NULL`);
}

describe('webhook retention', () => {
  it('When webhook events are older than WEBHOOK_RETENTION_DAYS, then the hourly retention job removes them with their deliveries, unless one is pending or a redelivery is recent', { timeout: 90_000 }, async () => {
    expect(SCHEDULES['webhooks.prune']).toBe('RETENTION_CRON');
    const days = stack.config.WEBHOOK_RETENTION_DAYS;
    const made = await stack.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url: `${stack.identitySim.url}/sandbox/hooks/r-${randomBytes(4).toString('hex')}`, events: ['ping'] } });
    expect(made.status).toBe(201);
    const endpoint = made.body.id as string;

    const oldDelivered = await deliveredPing(endpoint);
    const oldFailed = await deliveredPing(endpoint);
    const oldPending = await deliveredPing(endpoint);
    const oldRedelivered = await deliveredPing(endpoint);
    const recent = await deliveredPing(endpoint);
    // A recent redelivery of an old event: the log shows it, so its event stays.
    const original = (await deliveries(endpoint)).find((d) => d.event_id === oldRedelivered)!;
    expect((await stack.api('POST', `/v1/webhook-endpoints/deliveries/${original.id}/redeliver`, { token: org.admin.token })).status).toBe(202);
    await waitFor(async () => (await deliveries(endpoint)).filter((d) => d.event_id === oldRedelivered && d.status === 'delivered').length === 2, { what: 'the redelivery delivered', timeoutMs: 20_000 });

    for (const id of [oldDelivered, oldFailed, oldPending, oldRedelivered]) await age(id, days + 1);
    await stack.db.query(sql.unsafe`UPDATE webhook_deliveries SET status = 'failed', delivered_at = NULL, last_error = 'HTTP 500' WHERE event_id = ${oldFailed}`);
    // Pending again, due in a day, so the dispatcher leaves it be during the test.
    await stack.db.query(sql.unsafe`UPDATE webhook_deliveries SET status = 'pending', delivered_at = NULL, next_attempt_at = now() + interval '1 day' WHERE event_id = ${oldPending}`);
    // The recent event is a day inside the window.
    await age(recent, days - 1);

    const result = await prune({}, {} as Job, stack.workers!.deps as WorkerDeps, log);
    expect(result).toEqual({ events: 2, deliveries: 2 });
    expect(await eventIds()).toEqual([oldPending, oldRedelivered, recent].sort());
    expect(new Set((await deliveries(endpoint)).map((d) => d.event_id))).toEqual(new Set([oldPending, oldRedelivered, recent]));

    // Once the pending one has ended, the next run removes it too.
    await stack.db.query(sql.unsafe`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = now() WHERE event_id = ${oldPending}`);
    expect(await prune({}, {} as Job, stack.workers!.deps as WorkerDeps, log)).toEqual({ events: 1, deliveries: 1 });
    expect(await eventIds()).toEqual([oldRedelivered, recent].sort());
  });
});
