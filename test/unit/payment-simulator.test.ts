import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPaystackClient, ProcessorError, type PaystackClient } from '../../src/adapters/payment-processor/paystack.ts';
import { signPaystackBody, verifyPaystackSignature } from '../../src/adapters/payment-processor/signature.ts';
import { chargeSuccessEventSchema, paystackEventSchema } from '../../src/adapters/payment-processor/webhook.ts';
import { startPaymentSimulator, type PaymentSimulator } from '../../src/simulators/payment-processor/server.ts';
import { waitFor as poll } from '../setup/wait.ts';

const SECRET = 'sk_test_simulator_unit_secret';
const AMOUNT = 1_101_523; // NGN 11,015.23
const LATE_MS = 400;
const MAX_ATTEMPTS = 4;

type Received = { raw: Buffer; signature: string | undefined; event: string; reference: string; at: number };

async function listen(app: express.Express): Promise<{ url: string; server: Server; close: () => Promise<void> }> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const waitFor = <T>(probe: () => T | undefined | false, timeoutMs = 5000): Promise<T> =>
  poll(probe, { what: 'the simulator to deliver', timeoutMs, intervalMs: 10 }) as Promise<T>;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const newReference = (): string => `TOP-7-${randomBytes(8).toString('hex')}`;

/** A webhook endpoint like the service's: raw body, signature checked, 200 only when it verifies. */
function createReceiver() {
  const received: Received[] = [];
  // Statuses to answer, in order, for a reference before falling back to the normal answer.
  const scripted = new Map<string, number[]>();
  const app = express();
  app.post('/webhooks/paystack', express.raw({ type: () => true }), (req, res) => {
    const raw = req.body as Buffer;
    const signature = req.get('x-paystack-signature');
    const parsed = paystackEventSchema.parse(JSON.parse(raw.toString('utf8')));
    const reference = String((parsed.data as { reference?: unknown }).reference);
    received.push({ raw, signature, event: parsed.event, reference, at: Date.now() });
    const next = scripted.get(reference)?.shift();
    if (next !== undefined) return void res.sendStatus(next);
    res.sendStatus(verifyPaystackSignature(raw, signature, SECRET) ? 200 : 401);
  });
  return { app, received, scripted, of: (reference: string) => received.filter((r) => r.reference === reference) };
}

describe('Paystack simulator through the Paystack adapter', () => {
  const receiver = createReceiver();
  let receiverHttp: Awaited<ReturnType<typeof listen>>;
  let sim: PaymentSimulator;
  let client: PaystackClient;

  beforeAll(async () => {
    receiverHttp = await listen(receiver.app);
    sim = await startPaymentSimulator({
      port: 0,
      secretKey: SECRET,
      webhookUrl: `${receiverHttp.url}/webhooks/paystack`,
      webhookRetryMs: 25,
      webhookMaxAttempts: MAX_ATTEMPTS,
      lateMs: LATE_MS,
    });
    client = createPaystackClient({ baseUrl: sim.url, secretKey: SECRET, timeoutMs: 2000 });
  });

  afterAll(async () => {
    await sim?.close();
    await receiverHttp?.close();
  });

  async function initialize(metadata: Record<string, unknown> = {}) {
    const reference = newReference();
    const init = await client.initialize({
      email: 'payer@example.com',
      amountKobo: AMOUNT,
      reference,
      currency: 'NGN',
      metadata: { org_id: 7, units: 100, ...metadata },
      callbackUrl: 'https://merchant.example/topup/done',
    });
    return { reference, init };
  }

  async function simPay(reference: string, body: Record<string, unknown> = {}): Promise<Response> {
    return fetch(`${sim.url}/__sim/transactions/${reference}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  async function submitCheckout(authorizationUrl: string, fields: Record<string, string>, accept = 'application/json'): Promise<Response> {
    return fetch(authorizationUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept },
      body: new URLSearchParams(fields).toString(),
    });
  }

  it('When a payer pays on the hosted checkout, then verify turns from abandoned to success and a signed charge.success arrives', async () => {
    const { reference, init } = await initialize();
    expect(init.reference).toBe(reference);
    expect(init.authorizationUrl).toBe(`${sim.url}/checkout/${init.accessCode}`);

    const before = await client.verify(reference);
    expect(before).toMatchObject({ status: 'abandoned', amountKobo: AMOUNT, currency: 'NGN', paidAt: null });

    const page = await fetch(init.authorizationUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const html = await page.text();
    expect(html).toContain('NGN 11,015.23');
    expect(html).toMatch(/<button[^>]*name="action"[^>]*value="pay"[^>]*>Pay<\/button>/);
    expect(html).toMatch(/<button[^>]*name="action"[^>]*value="cancel"[^>]*>Cancel<\/button>/);
    expect(html).toMatch(/<form method="post">/);

    const paid = await submitCheckout(init.authorizationUrl, { action: 'pay' }, 'text/html');
    expect(paid.status).toBe(200);
    const confirmation = await paid.text();
    expect(confirmation).toContain('Charge successful');
    expect(confirmation).toContain('https://merchant.example/topup/done?trxref=' + reference);

    const after = await client.verify(reference);
    expect(after.status).toBe('success');
    expect(after.amountKobo).toBe(AMOUNT);
    expect(after.paidAt).not.toBeNull();
    // Paystack's local rule: 1.5% + NGN 100, capped at NGN 2,000.
    expect(after.raw).toMatchObject({ fees: Math.ceil((AMOUNT * 150) / 10_000) + 10_000, gateway_response: 'Successful', customer: { email: 'payer@example.com' } });

    const [delivery] = await waitFor(() => receiver.of(reference).length === 1 && receiver.of(reference));
    expect(delivery!.signature).toBe(createHmac('sha512', SECRET).update(delivery!.raw).digest('hex'));
    expect(verifyPaystackSignature(delivery!.raw, delivery!.signature, SECRET)).toBe(true);
    const event = chargeSuccessEventSchema.parse(JSON.parse(delivery!.raw.toString('utf8')));
    expect(event.data).toMatchObject({ reference, amount: AMOUNT, currency: 'NGN', status: 'success', metadata: { org_id: 7, units: 100 } });
    expect(event.data.paid_at).toBe(after.paidAt);

    await sleep(150);
    expect(receiver.of(reference)).toHaveLength(1);
    expect(sim.deliveries().filter((d) => d.reference === reference)).toEqual([expect.objectContaining({ event: 'charge.success', status: 200, attempt: 1 })]);
    const log = (await (await fetch(`${sim.url}/__sim/deliveries`)).json()) as { status: boolean; data: unknown[] };
    expect(log.data).toEqual(sim.deliveries());
  });

  it('When the payment is submitted again, then it stays paid and no second webhook is sent', async () => {
    const { reference, init } = await initialize();
    expect((await submitCheckout(init.authorizationUrl, { action: 'pay' })).status).toBe(200);
    await waitFor(() => receiver.of(reference).length === 1);
    const again = await submitCheckout(init.authorizationUrl, { action: 'pay' });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ status: true, message: 'Transaction already paid', data: { status: 'success' } });
    await sleep(150);
    expect(receiver.of(reference)).toHaveLength(1);
  });

  it('When metadata.sim_webhook is twice, then the same signed event is delivered twice', async () => {
    const { reference } = await initialize({ sim_webhook: 'twice' });
    expect((await simPay(reference)).status).toBe(200);
    const both = await waitFor(() => receiver.of(reference).length === 2 && receiver.of(reference));
    expect(both[0]!.raw.equals(both[1]!.raw)).toBe(true);
    for (const d of both) expect(verifyPaystackSignature(d.raw, d.signature, SECRET)).toBe(true);
    await sleep(150);
    expect(receiver.of(reference)).toHaveLength(2);
  });

  it('When the checkout form asks for webhook none, then nothing is delivered although the charge succeeded', async () => {
    const { reference, init } = await initialize({ sim_webhook: 'twice' });
    const res = await submitCheckout(init.authorizationUrl, { action: 'pay', webhook: 'none' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: true, data: { status: 'success', reference } });
    await sleep(250);
    expect(receiver.of(reference)).toHaveLength(0);
    expect(sim.deliveries().filter((d) => d.reference === reference)).toHaveLength(0);
    expect((await client.verify(reference)).status).toBe('success');
  });

  it('When the mode is bad-signature, then the signature does not verify and the refusals are retried up to the limit', async () => {
    const { reference } = await initialize();
    expect((await simPay(reference, { webhook: 'bad-signature' })).status).toBe(200);
    const first = await waitFor(() => receiver.of(reference)[0]);
    expect(first.signature).toMatch(/^[0-9a-f]{128}$/);
    expect(verifyPaystackSignature(first.raw, first.signature, SECRET)).toBe(false);
    const attempts = await waitFor(() => {
      const d = sim.deliveries().filter((x) => x.reference === reference);
      return d.length === MAX_ATTEMPTS && d;
    });
    expect(attempts.map((d) => [d.attempt, d.status])).toEqual([
      [1, 401],
      [2, 401],
      [3, 401],
      [4, 401],
    ]);
  });

  it('When the mode is late, then the webhook arrives only after the delay, well after verify already says success', async () => {
    const { reference } = await initialize({ sim_webhook: 'late' });
    const paidAt = Date.now();
    expect((await simPay(reference)).status).toBe(200);
    expect((await client.verify(reference)).status).toBe('success');
    await sleep(LATE_MS / 3);
    expect(receiver.of(reference)).toHaveLength(0);
    const [late] = await waitFor(() => receiver.of(reference).length === 1 && receiver.of(reference));
    expect(late!.at - paidAt).toBeGreaterThanOrEqual(LATE_MS - 20);
    expect(verifyPaystackSignature(late!.raw, late!.signature, SECRET)).toBe(true);
  });

  it('When the mode is out-of-order, then an unrelated signed event arrives before the charge.success', async () => {
    const { reference } = await initialize({ sim_webhook: 'out-of-order' });
    const mark = receiver.received.length;
    expect((await simPay(reference)).status).toBe(200);
    await waitFor(() => receiver.of(reference).length === 1);
    const since = receiver.received.slice(mark);
    const ours = since.findIndex((r) => r.reference === reference);
    const unrelated = since.findIndex((r) => r.event === 'paymentrequest.pending');
    expect(unrelated).toBeGreaterThanOrEqual(0);
    expect(unrelated).toBeLessThan(ours);
    expect(since[unrelated]!.reference).not.toBe(reference);
    expect(verifyPaystackSignature(since[unrelated]!.raw, since[unrelated]!.signature, SECRET)).toBe(true);
    expect(chargeSuccessEventSchema.safeParse(JSON.parse(since[unrelated]!.raw.toString('utf8'))).success).toBe(false);
  });

  it('When the receiver answers 500 twice, then the same event is retried until a 200 comes back', async () => {
    const { reference } = await initialize();
    receiver.scripted.set(reference, [500, 500]);
    expect((await simPay(reference)).status).toBe(200);
    const attempts = await waitFor(() => {
      const d = sim.deliveries().filter((x) => x.reference === reference);
      return d.length === 3 && d;
    });
    expect(attempts.map((d) => [d.attempt, d.status])).toEqual([
      [1, 500],
      [2, 500],
      [3, 200],
    ]);
    const bodies = receiver.of(reference).map((r) => r.raw.toString('hex'));
    expect(new Set(bodies).size).toBe(1);
    await sleep(150);
    expect(receiver.of(reference)).toHaveLength(3);
  });

  it('When the payer cancels, then the transaction stays abandoned, can no longer be paid and no webhook is sent', async () => {
    const { reference, init } = await initialize();
    const res = await submitCheckout(init.authorizationUrl, { action: 'cancel' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: true, message: 'Transaction cancelled', data: { status: 'abandoned' } });
    const v = await client.verify(reference);
    expect(v.status).toBe('abandoned');
    expect(v.paidAt).toBeNull();
    expect((await submitCheckout(init.authorizationUrl, { action: 'pay' })).status).toBe(400);
    expect(await (await fetch(init.authorizationUrl)).text()).not.toContain('value="pay"');
    await sleep(150);
    expect(receiver.of(reference)).toHaveLength(0);
  });

  it('When the simulator fails a charge, then verify says failed and no webhook is sent', async () => {
    const { reference } = await initialize();
    const res = await fetch(`${sim.url}/__sim/transactions/${reference}/fail`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect((await client.verify(reference)).status).toBe('failed');
    expect((await simPay(reference)).status).toBe(400);
    await sleep(150);
    expect(receiver.of(reference)).toHaveLength(0);
  });

  it('When the paid amount is tampered with, then verify reports the new amount and still shows what was requested', async () => {
    const { reference } = await initialize();
    await simPay(reference);
    const res = await fetch(`${sim.url}/__sim/transactions/${reference}/tamper`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 500_000 }),
    });
    expect(res.status).toBe(200);
    const v = await client.verify(reference);
    expect(v.status).toBe('success');
    expect(v.amountKobo).toBe(500_000);
    expect(v.raw).toMatchObject({ requested_amount: AMOUNT });
  });

  it('When the secret key is wrong or missing, then the processor answers 401 Invalid key', async () => {
    const wrong = createPaystackClient({ baseUrl: sim.url, secretKey: 'sk_test_wrong', timeoutMs: 2000 });
    const err = await wrong
      .initialize({ email: 'payer@example.com', amountKobo: AMOUNT, reference: newReference(), currency: 'NGN', metadata: {} })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProcessorError);
    expect(err).toMatchObject({ code: 'invalid_key', retryable: false, httpStatus: 401 });
    await expect(wrong.verify('anything')).rejects.toMatchObject({ code: 'invalid_key' });
    const bare = await fetch(`${sim.url}/transaction/verify/anything`);
    expect(bare.status).toBe(401);
    expect(await bare.json()).toEqual({ status: false, message: 'Invalid key' });
  });

  it('When a reference is reused, then initialize is refused as a duplicate', async () => {
    const { reference } = await initialize();
    const err = await client
      .initialize({ email: 'payer@example.com', amountKobo: AMOUNT, reference, currency: 'NGN', metadata: {} })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'duplicate_reference', retryable: false, httpStatus: 400 });
  });

  it('When a reference is unknown, then verify reports not_found', async () => {
    const raw = await fetch(`${sim.url}/transaction/verify/TOP-7-unknown`, { headers: { authorization: `Bearer ${SECRET}` } });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toEqual({ status: false, message: 'Transaction reference not found' });
    expect(await client.verify('TOP-7-unknown')).toMatchObject({ status: 'not_found', amountKobo: 0, paidAt: null });
  });

  it('When metadata.sim_webhook is not a mode, then initialize is refused', async () => {
    const res = await fetch(`${sim.url}/transaction/initialize`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'payer@example.com', amount: 5000, reference: newReference(), metadata: { sim_webhook: 'sometimes' } }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ status: false });
  });
});

describe('Simulator-wide webhook settings', () => {
  it('When the simulator mode is none, then only transactions that override it are delivered, once a URL is set', async () => {
    const receiver = createReceiver();
    const http = await listen(receiver.app);
    const sim = await startPaymentSimulator({ port: 0, secretKey: SECRET, webhookMode: 'none', webhookRetryMs: 25, webhookMaxAttempts: 6 });
    try {
      const client = createPaystackClient({ baseUrl: sim.url, secretKey: SECRET, timeoutMs: 2000 });
      const silent = newReference();
      const loud = newReference();
      await client.initialize({ email: 'a@example.com', amountKobo: 10_000, reference: silent, currency: 'NGN', metadata: {} });
      await client.initialize({ email: 'a@example.com', amountKobo: 10_000, reference: loud, currency: 'NGN', metadata: { sim_webhook: 'normal' } });
      for (const ref of [silent, loud]) await fetch(`${sim.url}/__sim/transactions/${ref}/pay`, { method: 'POST' });

      // No URL yet: attempts fail and keep being retried until one is set.
      await waitFor(() => sim.deliveries().some((d) => d.reference === loud && d.status === 'error'));
      sim.setWebhookUrl(`${http.url}/webhooks/paystack`);
      await waitFor(() => receiver.of(loud).length === 1);
      await sleep(150);
      expect(receiver.of(silent)).toHaveLength(0);
      expect(sim.deliveries().filter((d) => d.reference === loud).at(-1)).toMatchObject({ status: 200 });
    } finally {
      await sim.close();
      await http.close();
    }
  });

  it('When publicUrl is set, then checkout links use it', async () => {
    const sim = await startPaymentSimulator({ port: 0, secretKey: SECRET, publicUrl: 'https://pay.sandbox.example/' });
    try {
      const client = createPaystackClient({ baseUrl: sim.url, secretKey: SECRET, timeoutMs: 2000 });
      const init = await client.initialize({ email: 'a@example.com', amountKobo: 10_000, reference: newReference(), currency: 'NGN', metadata: {} });
      expect(init.authorizationUrl).toBe(`https://pay.sandbox.example/checkout/${init.accessCode}`);
    } finally {
      await sim.close();
    }
  });
});

describe('Paystack adapter against a failing processor', () => {
  it('When the processor answers 5xx, then the error is retryable', async () => {
    const app = express();
    app.use((_req, res) => void res.status(503).json({ status: false, message: 'Service unavailable' }));
    const http = await listen(app);
    try {
      const client = createPaystackClient({ baseUrl: http.url, secretKey: SECRET, timeoutMs: 2000 });
      await expect(client.verify('TOP-7-x')).rejects.toMatchObject({ name: 'ProcessorError', code: 'server_error', retryable: true, httpStatus: 503 });
    } finally {
      await http.close();
    }
  });

  it('When the processor does not answer in time, then the error is a retryable timeout', async () => {
    const app = express();
    app.use(() => {
      // never answers
    });
    const http = await listen(app);
    try {
      const client = createPaystackClient({ baseUrl: http.url, secretKey: SECRET, timeoutMs: 150 });
      await expect(client.verify('TOP-7-x')).rejects.toMatchObject({ code: 'timeout', retryable: true });
    } finally {
      await http.close();
    }
  });

  it('When nothing listens, then the error is a retryable network error', async () => {
    const http = await listen(express());
    const url = http.url;
    await http.close();
    const client = createPaystackClient({ baseUrl: url, secretKey: SECRET, timeoutMs: 2000 });
    await expect(client.verify('TOP-7-x')).rejects.toMatchObject({ code: 'network', retryable: true });
  });
});

describe('Paystack signature helpers', () => {
  const body = Buffer.from('{"event":"charge.success","data":{"reference":"TOP-7-abc","amount":5000}}');

  it('When the body is signed with the secret, then the signature verifies and matches an independent HMAC', () => {
    const sig = signPaystackBody(body, SECRET);
    expect(sig).toBe(createHmac('sha512', SECRET).update(body).digest('hex'));
    expect(signPaystackBody(body.toString('utf8'), SECRET)).toBe(sig);
    expect(verifyPaystackSignature(body, sig, SECRET)).toBe(true);
  });

  it('When the header is missing, malformed, truncated, from another key or for other bytes, then it does not verify', () => {
    const sig = signPaystackBody(body, SECRET);
    expect(verifyPaystackSignature(body, undefined, SECRET)).toBe(false);
    expect(verifyPaystackSignature(body, '', SECRET)).toBe(false);
    expect(verifyPaystackSignature(body, sig.slice(0, 64), SECRET)).toBe(false);
    expect(verifyPaystackSignature(body, `${sig}00`, SECRET)).toBe(false);
    expect(verifyPaystackSignature(body, `${sig.slice(0, 127)}z`, SECRET)).toBe(false);
    expect(verifyPaystackSignature(body, signPaystackBody(body, 'sk_test_other'), SECRET)).toBe(false);
    expect(verifyPaystackSignature(Buffer.from(`${body.toString()} `), sig, SECRET)).toBe(false);
  });
});
