import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDELIVERIES_PER_HOUR } from '../../src/modules/webhooks/endpoints.ts';
import * as repo from '../../src/modules/webhooks/webhooks.repository.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { until } from '../setup/wait.ts';

/**
 * POST /v1/webhook-endpoints/deliveries/{delivery_id}/redeliver must not let one organisation
 * flood a receiver. Per event and endpoint: 429 `redelivery_pending` while a redelivery is pending, 429
 * `redelivery_limit` beyond REDELIVERIES_PER_HOUR within an hour. No workers run here, so every delivery
 * stays pending until the test itself says how it ended (as the dispatcher would record it).
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ workers: false });
});
afterAll(async () => stack?.close());

async function endpointWithEvent(org: OrgFixture): Promise<{ endpointId: string; deliveryId: string; eventId: string }> {
  const e = await stack.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url: 'http://127.0.0.1:9/redelivery-cap', events: ['ping'] } });
  expect(e.status, e.text).toBe(201);
  return { endpointId: e.body.id, ...(await newEvent(org, e.body.id)) };
}

async function newEvent(org: OrgFixture, endpointId: string): Promise<{ deliveryId: string; eventId: string }> {
  const t = await stack.api('POST', `/v1/webhook-endpoints/${endpointId}/test`, { token: org.admin.token });
  expect(t.status, t.text).toBe(202);
  const list = await stack.api('GET', `/v1/webhook-endpoints/${endpointId}/deliveries`, { token: org.admin.token });
  const d = list.body.data.find((x: { event_id: string }) => x.event_id === t.body.event_id);
  return { deliveryId: d.id, eventId: t.body.event_id };
}

const redeliver = (org: OrgFixture, deliveryId: string) => stack.api('POST', `/v1/webhook-endpoints/deliveries/${deliveryId}/redeliver`, { token: org.admin.token });
/** What the dispatcher records when a delivery reached its receiver. */
const delivered = (deliveryId: string) => stack.db.query(sql.unsafe`UPDATE webhook_deliveries SET status = 'delivered', delivered_at = now() WHERE id = ${Number(deliveryId)}`);

describe('the redelivery cap', () => {
  it('When a redelivery of an event is still pending, then another redelivery of it is 429 redelivery_pending, whichever of its delivery ids is named; once it ended, one more is accepted', async () => {
    const org = await stack.createOrg();
    const { deliveryId, eventId } = await endpointWithEvent(org);
    const first = await redeliver(org, deliveryId);
    expect(first.status, first.text).toBe(202);
    expect(first.body).toMatchObject({ event_id: eventId, status: 'pending' });

    for (const id of [deliveryId, first.body.id as string]) {
      const refused = await redeliver(org, id);
      expect(refused.status, refused.text).toBe(429);
      expect(refused.body).toEqual({ detail: expect.stringMatching(/still pending/), code: 'redelivery_pending' });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }

    await delivered(first.body.id);
    const next = await redeliver(org, deliveryId);
    expect(next.status, next.text).toBe(202);
  });

  it('When an event was redelivered REDELIVERIES_PER_HOUR times within the hour, then one more is 429 redelivery_limit with Retry-After; once the oldest is over an hour old, one more is accepted; another event is not held back', async () => {
    const org = await stack.createOrg();
    const { endpointId, deliveryId } = await endpointWithEvent(org);
    const ids: string[] = [];
    for (let i = 0; i < REDELIVERIES_PER_HOUR; i++) {
      // Redelivering the last redelivery counts as much as the first delivery.
      const r = await redeliver(org, ids.at(-1) ?? deliveryId);
      expect(r.status, r.text).toBe(202);
      ids.push(r.body.id);
      await delivered(r.body.id);
    }
    const refused = await redeliver(org, deliveryId);
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body).toEqual({ detail: `at most ${REDELIVERIES_PER_HOUR} redeliveries of an event to an endpoint per hour`, code: 'redelivery_limit' });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);

    const other = await newEvent(org, endpointId);
    expect((await redeliver(org, other.deliveryId)).status).toBe(202);

    // The oldest of the five leaves the hour (moved back, as time would): room for one more.
    await stack.db.query(sql.unsafe`UPDATE webhook_deliveries SET created_at = now() - interval '61 minutes' WHERE id = ${Number(ids[0])}`);
    expect((await redeliver(org, deliveryId)).status).toBe(202);
    expect((await redeliver(org, deliveryId)).status).toBe(429);
  });

  it('When a redelivery is asked for while another request for the same event is between its count and its commit, then it waits for that one and is refused 429 redelivery_pending', async () => {
    const org = await stack.createOrg();
    const { deliveryId } = await endpointWithEvent(org);
    const owner = (await repo.deliveryEndpoint(stack.db, org.orgId, Number(deliveryId)))!;
    let commit!: () => void;
    const held = new Promise<void>((resolve) => (commit = resolve));
    let inserted!: () => void;
    const isInserted = new Promise<void>((resolve) => (inserted = resolve));
    // The first request's transaction, stopped after its count and insert, before its COMMIT.
    const first = stack.db.transaction(async (tx) => {
      expect((await repo.lockRedeliveries(tx, owner.endpoint_id, owner.event_id)).pending).toBe(0);
      expect(await repo.insertRedelivery(tx, org.orgId, Number(deliveryId))).not.toBeNull();
      inserted();
      await held;
    });
    await isInserted;
    const second = redeliver(org, deliveryId);
    try {
      // The second one waits on the pair's lock (seen in pg_stat_activity), not past it.
      const waiting = await until(
        () => stack.db.oneFirst(sql.unsafe`SELECT count(*)::int FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%pg_advisory_xact_lock%'`),
        (n) => n === 1,
        20_000,
      );
      expect(waiting).toBe(1);
    } finally {
      commit();
      await first;
    }
    const refused = await second;
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body.code).toBe('redelivery_pending');
    expect(await stack.db.oneFirst(sql.unsafe`SELECT count(*)::int FROM webhook_deliveries WHERE redelivery_of IS NOT NULL AND event_id = ${owner.event_id}`)).toBe(1);
  });
});
