import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { pingLimit } from '../../src/modules/webhooks/endpoints.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

/**
 * POST /v1/webhook-endpoints/{id}/test makes the service send on an organisation's word, so it is
 * capped per endpoint (WEBHOOK_PINGS_PER_HOUR, 10 by default, within an hour, then 429 `ping_limit`) and each ping, like each
 * redelivery, leaves an audit event naming who asked. No workers run: every delivery stays pending,
 * which must not hold the next ping back.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ workers: false });
});
afterAll(async () => stack?.close());
const perHour = () => stack.config.WEBHOOK_PINGS_PER_HOUR;

async function endpoint(org: OrgFixture): Promise<string> {
  const e = await stack.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url: 'http://127.0.0.1:9/ping-cap', events: ['ping'] } });
  expect(e.status, e.text).toBe(201);
  return e.body.id;
}
const ping = (org: OrgFixture, id: string) => stack.api('POST', `/v1/webhook-endpoints/${id}/test`, { token: org.admin.token });
const audit = z.object({ action: z.string(), actor: z.string(), target: z.string().nullable(), details: z.record(z.string(), z.unknown()) });
const eventsOf = (orgId: number, action: string) =>
  stack.db.any(sql.type(audit)`SELECT action, actor, target, details FROM audit_events WHERE org_id = ${orgId} AND action = ${action} ORDER BY id`);

describe('test pings to a webhook endpoint', () => {
  it('When an endpoint was pinged WEBHOOK_PINGS_PER_HOUR times within the hour, then one more is 429 ping_limit with Retry-After, another endpoint is not held back, and once the oldest is over an hour old one more is accepted', async () => {
    const org = await stack.createOrg();
    const id = await endpoint(org);
    const sent: string[] = [];
    for (let i = 0; i < perHour(); i++) {
      // Each earlier ping is still pending (no workers): that does not hold the next back.
      const r = await ping(org, id);
      expect(r.status, r.text).toBe(202);
      sent.push(r.body.event_id);
    }
    const refused = await ping(org, id);
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body).toEqual({ detail: pingLimit(perHour()), code: 'ping_limit' });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(await stack.db.oneFirst(sql.unsafe`SELECT count(*)::int FROM webhook_deliveries WHERE endpoint_id = ${id}`)).toBe(perHour());

    const other = await endpoint(org);
    expect((await ping(org, other)).status).toBe(202);

    // The oldest ping leaves the hour (moved back, as time would): room for exactly one more.
    await stack.db.query(sql.unsafe`UPDATE webhook_events SET created_at = now() - interval '61 minutes' WHERE id = ${sent[0]!}`);
    expect((await ping(org, id)).status).toBe(202);
    expect((await ping(org, id)).status).toBe(429);
  });

  it('When pings arrive at once beyond the cap, then exactly WEBHOOK_PINGS_PER_HOUR are accepted', async () => {
    const org = await stack.createOrg();
    const id = await endpoint(org);
    const answers = await Promise.all(Array.from({ length: perHour() + 8 }, () => ping(org, id)));
    expect(answers.filter((a) => a.status === 202)).toHaveLength(perHour());
    expect(answers.filter((a) => a.status === 429).every((a) => a.body.code === 'ping_limit')).toBe(true);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(8);
  });

  it('When an administrator pings an endpoint and redelivers a delivery, then each leaves an audit event with who asked, the endpoint and the event', async () => {
    const org = await stack.createOrg();
    const id = await endpoint(org);
    const p = await ping(org, id);
    expect(p.status, p.text).toBe(202);
    const pinged = await eventsOf(org.orgId, 'webhook_endpoint.pinged');
    expect(pinged).toEqual([{ action: 'webhook_endpoint.pinged', actor: expect.stringMatching(/^user:\d+$/), target: `webhook_endpoint:${id}`, details: { event_id: p.body.event_id } }]);

    const list = await stack.api('GET', `/v1/webhook-endpoints/${id}/deliveries`, { token: org.admin.token });
    const first = (list.body.data as { id: string; event_id: string }[]).find((d) => d.event_id === p.body.event_id)!;
    const again = await stack.api('POST', `/v1/webhook-endpoints/deliveries/${first.id}/redeliver`, { token: org.admin.token });
    expect(again.status, again.text).toBe(202);
    expect(await eventsOf(org.orgId, 'webhook_endpoint.redelivered')).toEqual([
      { action: 'webhook_endpoint.redelivered', actor: pinged[0]!.actor, target: `webhook_endpoint:${id}`, details: { event_id: p.body.event_id, delivery_id: again.body.id, redelivery_of: first.id } },
    ]);
    // A refused redelivery (one is pending) leaves none.
    expect((await stack.api('POST', `/v1/webhook-endpoints/deliveries/${first.id}/redeliver`, { token: org.admin.token })).status).toBe(429);
    expect(await eventsOf(org.orgId, 'webhook_endpoint.redelivered')).toHaveLength(1);
  });
});
