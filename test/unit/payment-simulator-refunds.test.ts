import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPaystackClient, ProcessorError, type PaystackClient } from '../../src/adapters/payment-processor/paystack.ts';
import { startPaymentSimulator, type PaymentSimulator } from '../../src/simulators/payment-processor/server.ts';

const SECRET = 'sk_test_simulator_refund_secret';
const AMOUNT = 1_101_523;

let sim: PaymentSimulator;
let client: PaystackClient;

beforeAll(async () => {
  sim = await startPaymentSimulator({ port: 0, secretKey: SECRET });
  client = createPaystackClient({ baseUrl: sim.url, secretKey: SECRET, timeoutMs: 2000 });
});
afterAll(async () => sim?.close());

async function control(path: string, body: Record<string, unknown> = {}) {
  const r = await fetch(`${sim.url}/__sim${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as any };
}

async function paid(): Promise<string> {
  const reference = `TOP-9-${randomBytes(8).toString('hex')}`;
  await client.initialize({ email: 'payer@example.com', amountKobo: AMOUNT, reference, currency: 'NGN', metadata: { sim_webhook: 'none' } });
  expect((await control(`/transactions/${reference}/pay`)).status).toBe(200);
  return reference;
}

describe('Paystack simulator refunds through the adapter', () => {
  it('When a paid transaction is refunded, then the refund is pending; processed, verify reports the transaction reversed', async () => {
    const reference = await paid();
    const refund = await client.refund({ reference, merchantNote: 'test' });
    expect(refund).toMatchObject({ status: 'pending', amountKobo: AMOUNT, currency: 'NGN' });
    expect(await client.fetchRefund(refund.id)).toEqual(refund);
    expect((await client.verify(reference)).status).toBe('success');
    expect((await control(`/refunds/${refund.id}/processed`)).body.data).toMatchObject({ status: 'processed', reference });
    expect(await client.fetchRefund(refund.id)).toEqual({ ...refund, status: 'processed' });
    expect((await client.verify(reference)).status).toBe('reversed');
  });

  it('When the same transaction is refunded again, then the processor refuses and the adapter answers the existing refund', async () => {
    const reference = await paid();
    const first = await client.refund({ reference });
    const raw = await fetch(`${sim.url}/refund`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
      body: JSON.stringify({ transaction: reference }),
    });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toEqual({ status: false, message: 'Transaction has been fully reversed' });
    expect(await client.refund({ reference })).toEqual(first);
    expect(await client.findRefund(reference)).toEqual(first);
  });

  it('When a refund failed, then a new one may be made; when the transaction was never paid, the refund is refused', async () => {
    const reference = await paid();
    const first = await client.refund({ reference });
    await control(`/refunds/${first.id}/failed`);
    const second = await client.refund({ reference });
    expect(second.id).not.toBe(first.id);
    expect(await client.findRefund(reference)).toEqual(second);

    const unpaid = `TOP-9-${randomBytes(8).toString('hex')}`;
    await client.initialize({ email: 'payer@example.com', amountKobo: AMOUNT, reference: unpaid, currency: 'NGN', metadata: {} });
    const refused = await client.refund({ reference: unpaid }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ProcessorError);
    expect((refused as ProcessorError).message).toBe('processor refused refund (400): Cannot refund a transaction that was not successful');
    expect(await client.findRefund(unpaid)).toBeNull();
    expect(await client.fetchRefund('999')).toBeNull();
  });

  it('When new refunds are set to start processed, then a refund is processed at once; a chargeback reverses a paid transaction', async () => {
    expect((await control('/refunds/initial-status', { status: 'processed' })).status).toBe(200);
    const reference = await paid();
    expect((await client.refund({ reference })).status).toBe('processed');
    expect((await control('/refunds/initial-status', { status: 'bogus' })).status).toBe(400);
    await control('/refunds/initial-status', { status: 'pending' });

    const disputed = await paid();
    expect((await control(`/transactions/${disputed}/reverse`)).body.data.status).toBe('reversed');
    expect((await client.verify(disputed)).status).toBe('reversed');
    expect((await control(`/transactions/${disputed}/reverse`)).status).toBe(400);
  });
});
