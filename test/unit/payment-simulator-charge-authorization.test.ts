import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPaystackClient, ProcessorError, type PaystackClient } from '../../src/adapters/payment-processor/paystack.ts';
import { verifyPaystackSignature } from '../../src/adapters/payment-processor/signature.ts';
import { chargeSuccessEventSchema } from '../../src/adapters/payment-processor/webhook.ts';
import { startPaymentSimulator, type PaymentSimulator } from '../../src/simulators/payment-processor/server.ts';
import { waitFor } from '../setup/wait.ts';

// The simulator's reusable authorizations and POST /transaction/charge_authorization,
// read through the service's adapter; the declining test card; the charge.success of a charge.

const SECRET = 'sk_test_charge_authorization';
const EMAIL = 'payer@example.com';
const newReference = (): string => `TOP-9-${randomBytes(8).toString('hex')}`;

describe('charge_authorization in the payment simulator, through the adapter', () => {
  const received: { raw: Buffer; signature: string | undefined; reference: string }[] = [];
  let receiver: Server;
  let sim: PaymentSimulator;
  let client: PaystackClient;

  beforeAll(async () => {
    const app = express();
    app.post('/hook', express.raw({ type: () => true }), (req, res) => {
      const raw = req.body as Buffer;
      received.push({ raw, signature: req.get('x-paystack-signature'), reference: String(JSON.parse(raw.toString('utf8')).data?.reference) });
      res.sendStatus(200);
    });
    receiver = createServer(app);
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    sim = await startPaymentSimulator({ port: 0, secretKey: SECRET, webhookUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, webhookRetryMs: 25 });
    client = createPaystackClient({ baseUrl: sim.url, secretKey: SECRET, timeoutMs: 2000 });
  });
  afterAll(async () => {
    await sim?.close();
    await new Promise<void>((resolve) => {
      receiver?.close(() => resolve());
      receiver?.closeAllConnections();
    });
  });

  /** A checkout payment with `card` (the simulator's default when absent); its verify answer. */
  async function paidWith(card?: string, email = EMAIL) {
    const reference = newReference();
    await client.initialize({ email, amountKobo: 50_000, reference, currency: 'NGN', metadata: {} });
    const paid = await fetch(`${sim.url}/__sim/transactions/${reference}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(card ? { card } : {}),
    });
    expect(paid.status).toBe(200);
    return client.verify(reference);
  }

  const charge = (code: string, reference = newReference(), email = EMAIL, metadata: Record<string, unknown> = {}) =>
    client.chargeAuthorization({ authorizationCode: code, email, amountKobo: 107_700, reference, currency: 'NGN', metadata });

  it('When a payer pays with the default test card, then verify shows a reusable authorization (AUTH_, last4, card type, bank) bound to the payer, and charging it succeeds with its own signed charge.success', async () => {
    const first = await paidWith();
    expect(first.authorization).toEqual({ code: expect.stringMatching(/^AUTH_[0-9a-f]{10}$/), email: EMAIL, cardType: 'visa', last4: '4081', bank: 'TEST BANK', expMonth: '12', expYear: '2030' });
    expect(first.raw).toMatchObject({ authorization: { authorization_code: first.authorization!.code, reusable: true, channel: 'card', bin: '408408', signature: expect.stringMatching(/^SIG_/) } });

    const reference = newReference();
    const charged = await charge(first.authorization!.code, reference);
    expect(charged).toEqual({ status: 'success', gatewayResponse: 'Approved', amountKobo: 107_700, currency: 'NGN' });
    const verified = await client.verify(reference);
    expect(verified).toMatchObject({ status: 'success', amountKobo: 107_700, authorization: { code: first.authorization!.code, last4: '4081' } });

    const delivery = await waitFor(() => received.find((r) => r.reference === reference), { what: 'the charge.success of the charge' });
    expect(verifyPaystackSignature(delivery.raw, delivery.signature, SECRET)).toBe(true);
    const event = chargeSuccessEventSchema.parse(JSON.parse(delivery.raw.toString('utf8')));
    expect(event.data).toMatchObject({ reference, amount: 107_700, status: 'success', gateway_response: 'Approved', authorization: { authorization_code: first.authorization!.code } });
  });

  it('When the declining test card 4084080000000409 paid at the checkout, then its authorization is reusable but a later charge is declined (failed, Declined) and verify says failed', async () => {
    const first = await paidWith('4084080000000409');
    expect(first).toMatchObject({ status: 'success', authorization: { last4: '0409', cardType: 'visa' } });
    const reference = newReference();
    expect(await charge(first.authorization!.code, reference)).toEqual({ status: 'failed', gatewayResponse: 'Declined', amountKobo: 107_700, currency: 'NGN' });
    expect(await client.verify(reference)).toMatchObject({ status: 'failed', authorization: null });
    // The decline is final for this reference: charging it again is a duplicate.
    await expect(charge(first.authorization!.code, reference)).rejects.toMatchObject({ code: 'duplicate_reference', retryable: false });
  });

  it('When a Verve card that is not reusable paid, then the adapter reports no authorization, and charging its code is refused (400, not retryable)', async () => {
    const first = await paidWith('5060666666666666666');
    expect(first.status).toBe('success');
    expect(first.authorization).toBeNull();
    const code = (first.raw as { authorization: { authorization_code: string; reusable: boolean } }).authorization;
    expect(code.reusable).toBe(false);
    const refused = await charge(code.authorization_code).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ProcessorError);
    expect(refused).toMatchObject({ code: 'rejected', retryable: false, httpStatus: 400 });
  });

  it('When the code is unknown, the e-mail is not the one it belongs to, or the reference is taken, then charge_authorization is refused with 400 and nothing is charged', async () => {
    const first = await paidWith();
    const unknown = await charge('AUTH_0000000000').catch((e: unknown) => e as ProcessorError);
    expect(unknown).toMatchObject({ code: 'rejected', httpStatus: 400, message: expect.stringContaining('Invalid Authorization Code') });
    const reference = newReference();
    const otherEmail = await charge(first.authorization!.code, reference, 'someone-else@example.com').catch((e: unknown) => e as ProcessorError);
    expect(otherEmail).toMatchObject({ code: 'rejected', message: expect.stringContaining('Email does not match Authorization code') });
    expect((await client.verify(reference)).status).toBe('not_found');
    const taken = newReference();
    await client.initialize({ email: EMAIL, amountKobo: 1000, reference: taken, currency: 'NGN', metadata: {} });
    await expect(charge(first.authorization!.code, taken)).rejects.toMatchObject({ code: 'duplicate_reference' });
    // The key is checked first, as on every Paystack call.
    const raw = await fetch(`${sim.url}/transaction/charge_authorization`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect({ status: raw.status, body: await raw.json() }).toEqual({ status: 401, body: { status: false, message: 'Invalid key' } });
  });

  it('When the checkout page is shown, then it offers the three test cards; an unknown card is refused', async () => {
    const reference = newReference();
    const init = await client.initialize({ email: EMAIL, amountKobo: 1000, reference, currency: 'NGN', metadata: {} });
    const html = await (await fetch(init.authorizationUrl)).text();
    expect(html).toContain('<select name="card">');
    for (const number of ['4084 0840 8408 4081', '4084 0800 0000 0409', '5060 6666 6666 6666 666']) expect(html).toContain(number);
    const refused = await fetch(init.authorizationUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ action: 'pay', card: '4111111111111111' }).toString(),
    });
    expect(refused.status).toBe(400);
    const paid = await fetch(init.authorizationUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ action: 'pay', card: '4084080000000409' }).toString(),
    });
    expect(paid.status).toBe(200);
    expect((await client.verify(reference)).authorization).toMatchObject({ last4: '0409' });
  });
});
