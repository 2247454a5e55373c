import { randomBytes } from 'node:crypto';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TARGET_REFUSED } from '../../src/modules/webhooks/address-guard.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

/**
 * Where a webhook endpoint may point, over the API of a sandbox stack (http and loopback allowed):
 * never at this service's own listening ports (the API, the payment simulator, the mail sink, the
 * metrics), at registration, at PATCH and at delivery; on the identity simulator's port only its
 * /sandbox/hooks/{name} receiver. And every refused address, whatever the reason, answers the one
 * same detail, so registering tells nothing about what a name resolves to, or whether it exists.
 */
let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack({ env: { WEBHOOK_RETRY_FIRST_MS: '30000', WEBHOOK_POLL_MS: '200', WEBHOOK_TIMEOUT_MS: '2000' } });
  org = await stack.createOrg();
});
afterAll(async () => stack?.close());

const register = (url: string) => stack.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url, events: ['ping'] } });
const portOf = (url: string) => new URL(url).port;

describe("webhook receivers on this service's own ports", () => {
  it("When an endpoint names the API, the payment simulator (its pay address too), the mail sink or the metrics port on loopback, then registration is 400 with the one refusal detail", async () => {
    const pay = `${stack.paymentSim.url}/__sim/transactions/TOP-x/pay`;
    const own = [
      `${stack.url}/v1/topup/initialize`,
      `http://localhost:${portOf(stack.url)}/v1/me`,
      pay,
      pay.replace('127.0.0.1', 'localhost'),
      pay.replace('127.0.0.1', '[::ffff:127.0.0.1]'),
      `http://127.0.0.1:${stack.config.PORT}/v1/me`,
      `http://127.0.0.1:${stack.config.sandboxSwitches!.SANDBOX_SMTP_PORT}/`,
      `http://127.0.0.1:${stack.config.WORKER_METRICS_PORT}/metrics`,
      `http://127.0.0.1:${stack.config.FACE_METRICS_PORT}/metrics`,
      // The identity simulator, outside its receiver (its dot segments resolved first).
      `${stack.identitySim.url}/v1/nin/12345678901`,
      `${stack.identitySim.url}/sandbox/hooks/../mail`,
      `${stack.identitySim.url}/sandbox/mail`,
    ];
    for (const url of own) {
      const r = await register(url);
      expect(r.status, url).toBe(400);
      expect(r.body, url).toEqual({ detail: TARGET_REFUSED });
    }
  });

  it("When an endpoint names the identity simulator's /sandbox/hooks/{name} receiver, then it is accepted (the README's walk)", async () => {
    const r = await register(`${stack.identitySim.url}/sandbox/hooks/walk-${randomBytes(3).toString('hex')}?status=200`);
    expect(r.status, r.text).toBe(201);
  });

  it("When an endpoint is moved by PATCH onto the payment simulator, then it is 400 with the one refusal detail and keeps its URL", async () => {
    const made = await register(`${stack.identitySim.url}/sandbox/hooks/moved`);
    expect(made.status).toBe(201);
    const moved = await stack.api('PATCH', `/v1/webhook-endpoints/${made.body.id}`, { token: org.admin.token, json: { url: `${stack.paymentSim.url}/__sim/transactions/TOP-x/pay` } });
    expect(moved.status, moved.text).toBe(400);
    expect(moved.body).toEqual({ detail: TARGET_REFUSED });
    expect((await stack.api('GET', `/v1/webhook-endpoints/${made.body.id}`, { token: org.admin.token })).body.url).toBe(made.body.url);
  });

  it("When an endpoint written before this rule points at the payment simulator's pay address, then its ping is refused at delivery with the one detail and the top-up stays unpaid", async () => {
    const funded = await stack.createOrg();
    const topup = await stack.api('POST', '/v1/topup/initialize', { token: funded.admin.token, form: { units: 200 } });
    expect(topup.status, topup.text).toBe(200);
    const ref = topup.body.reference as string;
    const made = await stack.api('POST', '/v1/webhook-endpoints', { token: funded.admin.token, json: { url: `${stack.identitySim.url}/sandbox/hooks/old`, events: ['ping'] } });
    expect(made.status).toBe(201);
    // As an endpoint registered before the rule: its URL written straight into the row.
    await stack.db.query(sql.unsafe`UPDATE webhook_endpoints SET url = ${`${stack.paymentSim.url}/__sim/transactions/${ref}/pay`} WHERE id = ${made.body.id}`);
    const ping = await stack.api('POST', `/v1/webhook-endpoints/${made.body.id}/test`, { token: funded.admin.token });
    expect(ping.status).toBe(202);
    const tried = await waitFor(
      async () => ((await stack.api('GET', `/v1/webhook-endpoints/${made.body.id}/deliveries`, { token: funded.admin.token })).body.data as { event_id: string; last_error: string | null }[]).find((d) => d.event_id === ping.body.event_id && d.last_error !== null),
      { what: 'the ping tried once', timeoutMs: 20_000 },
    );
    expect(tried.last_error).toBe(TARGET_REFUSED);
    const verify = await fetch(`${stack.paymentSim.url}/transaction/verify/${ref}`, { headers: { authorization: `Bearer ${stack.config.PAYSTACK_SECRET_KEY}` } });
    expect(((await verify.json()) as { data: { status: string } }).data.status).not.toBe('success');
  });
});

describe('one detail for every refused address', () => {
  it('When a name does not resolve, a name or a literal is not public, or a literal is link-local, then registration answers 400 with the same detail for each', async () => {
    const urls = [
      `http://no-such-host-${randomBytes(4).toString('hex')}.invalid/hook`,
      'http://10.0.0.7/hook',
      'http://[fc00::1]/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://0.0.0.0:8080/hook',
      `${stack.paymentSim.url}/`,
    ];
    const details = new Set<string>();
    for (const url of urls) {
      const r = await register(url);
      expect(r.status, url).toBe(400);
      details.add(r.body.detail);
    }
    expect([...details]).toEqual([TARGET_REFUSED]);
  });
});
