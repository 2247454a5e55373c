import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

/**
 * A ping or a redelivery makes us send to a receiver on the caller's word, so who asked is on the
 * audit trail: the event is written in the transaction that queues the delivery. Proved by making the
 * audit write fail for one endpoint (a trigger in this test's database): the ping or redelivery is
 * then not queued either, and once the trail takes events again both are written together.
 */
let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack({ workers: false });
  org = await stack.createOrg();
});
afterAll(async () => stack?.close());

const n = z.object({ n: z.coerce.number() });
const pings = (endpointId: string) =>
  stack.db.oneFirst(sql.type(n)`SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE d.endpoint_id = ${endpointId} AND e.type = 'ping' AND d.redelivery_of IS NULL`);
const redeliveries = (endpointId: string) =>
  stack.db.oneFirst(sql.type(n)`SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ${endpointId} AND redelivery_of IS NOT NULL`);
const audited = (endpointId: string, action: string) =>
  stack.db.oneFirst(sql.type(n)`SELECT count(*)::int AS n FROM audit_events WHERE target = ${`webhook_endpoint:${endpointId}`} AND action = ${action}`);

/** Until `heal` is called, the trail refuses the ping and redelivery events of this endpoint. */
async function trailRefuses(endpointId: string): Promise<() => Promise<void>> {
  const fn = sql.identifier([`refuse_${endpointId.replace(/[^a-z0-9]/gi, '_').toLowerCase()}`]);
  await stack.db.query(sql.unsafe`
    CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.target = ${sql.literalValue(`webhook_endpoint:${endpointId}`)} AND NEW.action IN ('webhook_endpoint.pinged', 'webhook_endpoint.redelivered') THEN
        RAISE EXCEPTION 'the trail is refusing this endpoint''s events (test)';
      END IF;
      RETURN NEW;
    END $$`);
  await stack.db.query(sql.unsafe`CREATE TRIGGER ${fn} BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION ${fn}()`);
  return async () => {
    await stack.db.query(sql.unsafe`DROP TRIGGER ${fn} ON audit_events`);
    await stack.db.query(sql.unsafe`DROP FUNCTION ${fn}()`);
  };
}

describe('pings and redeliveries are audited with the delivery they queue', () => {
  it('When the audit event of a ping or a redelivery cannot be written, then neither is queued; when it can, both the delivery and its event are', async () => {
    const e = await stack.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url: 'http://127.0.0.1:9/audited-together', events: ['ping'] } });
    expect(e.status, e.text).toBe(201);
    const id = e.body.id as string;
    const first = await stack.api('POST', `/v1/webhook-endpoints/${id}/test`, { token: org.admin.token });
    expect(first.status, first.text).toBe(202);
    const deliveries = await stack.api('GET', `/v1/webhook-endpoints/${id}/deliveries`, { token: org.admin.token });
    const deliveryId = deliveries.body.data[0].id as string;
    expect(await pings(id)).toBe(1);
    expect(await audited(id, 'webhook_endpoint.pinged')).toBe(1);

    const heal = await trailRefuses(id);
    try {
      const ping = await stack.api('POST', `/v1/webhook-endpoints/${id}/test`, { token: org.admin.token });
      expect(ping.status).toBe(500);
      const again = await stack.api('POST', `/v1/webhook-endpoints/deliveries/${deliveryId}/redeliver`, { token: org.admin.token });
      expect(again.status).toBe(500);
    } finally {
      await heal();
    }
    expect(await pings(id)).toBe(1);
    expect(await redeliveries(id)).toBe(0);
    expect(await audited(id, 'webhook_endpoint.pinged')).toBe(1);
    expect(await audited(id, 'webhook_endpoint.redelivered')).toBe(0);

    const redelivered = await stack.api('POST', `/v1/webhook-endpoints/deliveries/${deliveryId}/redeliver`, { token: org.admin.token });
    expect(redelivered.status, redelivered.text).toBe(202);
    expect(await redeliveries(id)).toBe(1);
    expect(await audited(id, 'webhook_endpoint.redelivered')).toBe(1);
  });
});
