import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signPaystackBody } from '../../src/adapters/payment-processor/signature.ts';
import { startStack, type Stack } from '../setup/harness.ts';
import { settledCreditJobs } from '../setup/jobs.ts';
import { until } from '../setup/wait.ts';

// Test queries read loosely typed rows; the service's own queries are the typed ones.
const q = sql.type(z.record(z.string(), z.any()));

const SECRET = 'sk_test_harness_secret';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack?.close());

const balance = async (token: string): Promise<number> => (await stack.api('GET', '/v1/me', { token })).body.organisation.units;

async function initialize(token: string, units = 100) {
  const r = await stack.api('POST', '/v1/topup/initialize', { token, form: { units } });
  expect(r.status).toBe(200);
  return r.body as { reference: string; authorization_url: string; total_amount: number; base_amount: number; vat_amount: number; service_charge: number };
}

function postEvent(body: string, signature: string | undefined, path = '/v1/webhooks/paystack') {
  return stack.api('POST', path, { raw: body, contentType: 'application/json', headers: signature === undefined ? {} : { 'x-paystack-signature': signature } });
}

const eventsFor = (reference: string) =>
  stack.db.any(q`SELECT event, outcome, payload FROM processor_events WHERE reference = ${reference} ORDER BY id`);
const ledgerFor = (reference: string) =>
  stack.db.any(q`SELECT kind, amount::int, vat_amount::int, service_charge::int, units_delta::int, units_before::int, units_after::int, details FROM wallet_transactions WHERE reference = ${reference}`);

describe('POST /webhooks/paystack', () => {
  it('When the payer pays on the checkout page, then the webhook alone credits the wallet once', async () => {
    const org = await stack.createOrg({ units: 7 });
    const t = await initialize(org.admin.token, 300);

    const page = await fetch(t.authorization_url);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(t.reference);
    expect(html).toContain('value="pay"');
    const paid = await fetch(t.authorization_url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ action: 'pay' }).toString(),
    });
    expect(paid.status).toBe(200);

    expect(await until(() => balance(org.admin.token), (u) => u > 7)).toBe(307);
    const lines = await ledgerFor(t.reference);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ kind: 'topup', units_delta: 300, units_before: 7, units_after: 307 });
    expect(Number(lines[0]!.amount)).toBe(t.base_amount);
    expect(Number(lines[0]!.vat_amount)).toBe(t.vat_amount);
    expect(Number(lines[0]!.service_charge)).toBe(t.service_charge);
    expect(lines[0]!.details).toMatchObject({ units: 300, bonus_units: 0, total_amount: t.total_amount, source: 'webhook' });

    const row = await stack.db.one(q`SELECT status, paid_amount, processor_status FROM topups WHERE reference = ${t.reference}`);
    expect(row).toMatchObject({ status: 'credited', processor_status: 'success' });
    expect(Number(row.paid_amount)).toBe(t.total_amount);
    const events = await until(() => eventsFor(t.reference), (e) => e[0]?.outcome === 'credited');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ event: 'charge.success', outcome: 'credited' });
    // The stored event keeps no customer or card details.
    expect(events[0]!.payload.data.customer).toBeUndefined();
    expect(events[0]!.payload.data.authorization).toBeUndefined();
  });

  it('When the processor delivers the event twice at once, then the wallet is credited once', async () => {
    const org = await stack.createOrg();
    const t = await initialize(org.admin.token, 100);
    await fetch(`${stack.paymentSim.url}/__sim/transactions/${t.reference}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ webhook: 'twice' }),
    });
    expect(await until(() => balance(org.admin.token), (u) => u > 0)).toBe(100);
    const delivered = await until(async () => stack.paymentSim.deliveries().filter((d) => d.reference === t.reference && d.status === 200).length, (n) => n >= 2);
    expect(delivered).toBe(2);
    // Both deliveries were answered, so both were queued (under one job id): once the credit jobs of
    // the reference have finished, nothing more can move the wallet.
    const jobs = await settledCreditJobs(stack, t.reference);
    expect(jobs.map((j) => [j.state, j.returnvalue.outcome])).toEqual([['completed', 'credited']]);
    expect(await balance(org.admin.token)).toBe(100);
    expect(await ledgerFor(t.reference)).toHaveLength(1);
    expect(await eventsFor(t.reference)).toHaveLength(1);
  });

  it('When an unrelated event comes first, then it is stored and acknowledged and the real one still credits', async () => {
    const org = await stack.createOrg();
    const t = await initialize(org.admin.token, 100);
    const earlier = stack.paymentSim.deliveries().length;
    await fetch(`${stack.paymentSim.url}/__sim/transactions/${t.reference}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ webhook: 'out-of-order' }),
    });
    expect(await until(() => balance(org.admin.token), (u) => u > 0)).toBe(100);
    // This payment's deliveries, in order: the unrelated event (its own reference), then the real one.
    const ours = stack.paymentSim.deliveries().slice(earlier).filter((d) => d.event === 'paymentrequest.pending' || d.reference === t.reference);
    expect(ours.map((d) => [d.event, d.status])).toEqual([
      ['paymentrequest.pending', 200],
      ['charge.success', 200],
    ]);
    const stored = await stack.db.any(q`SELECT outcome, processed_at IS NOT NULL AS processed FROM processor_events WHERE reference = ${ours[0]!.reference}`);
    expect(stored).toEqual([{ outcome: 'ignored', processed: true }]);
  });

  it('When the signature is wrong or missing, then 401 and nothing is stored or credited', async () => {
    const org = await stack.createOrg();
    const t = await initialize(org.admin.token, 100);
    const body = JSON.stringify({ event: 'charge.success', data: { id: 1, reference: t.reference, amount: t.total_amount, currency: 'NGN', status: 'success' } });
    for (const signature of [signPaystackBody(body, 'sk_wrong'), undefined, 'not-hex', signPaystackBody(body + ' ', SECRET)]) {
      const r = await postEvent(body, signature);
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ detail: 'Invalid signature' });
    }
    // The simulator's own bad-signature mode is refused too (it retries; each retry is refused).
    await fetch(`${stack.paymentSim.url}/__sim/transactions/${t.reference}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ webhook: 'bad-signature' }),
    });
    const refused = await until(async () => stack.paymentSim.deliveries().filter((d) => d.reference === t.reference), (d) => d.length >= 1);
    expect(refused.map((d) => d.status)).toEqual(refused.map(() => 401));
    // A refused event is neither stored nor queued before its 401 goes out: nothing is left to credit.
    expect(await eventsFor(t.reference)).toHaveLength(0);
    expect(await settledCreditJobs(stack, t.reference)).toEqual([]);
    expect(await balance(org.admin.token)).toBe(0);
  });

  it('When the raw body is signed as sent (any spacing), then it is accepted: the signature covers the bytes', async () => {
    const org = await stack.createOrg();
    const t = await initialize(org.admin.token, 100);
    await fetch(`${stack.paymentSim.url}/__sim/transactions/${t.reference}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ webhook: 'none' }),
    });
    const body = JSON.stringify({ event: 'charge.success', data: { reference: t.reference, status: 'success', currency: 'NGN', amount: t.total_amount, id: 42 } }, null, 2);
    const r = await postEvent(body, signPaystackBody(body, SECRET), '/webhooks/paystack');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ok' });
    expect(await until(() => balance(org.admin.token), (u) => u > 0)).toBe(100);
  });

  it('When the body is signed but not JSON, then 400 and nothing is stored', async () => {
    const before = await stack.db.oneFirst(q`SELECT count(*)::int FROM processor_events`);
    const body = '{"event": "charge.success", ';
    const r = await postEvent(body, signPaystackBody(body, SECRET));
    expect(r.status).toBe(400);
    expect(await stack.db.oneFirst(q`SELECT count(*)::int FROM processor_events`)).toBe(before);
  });

  it('When another event type or an unknown reference arrives, then it is stored once, acknowledged, and nothing is credited', async () => {
    const other = JSON.stringify({ event: 'transfer.success', data: { reference: 'TRF-123', amount: 100 } });
    const unknown = JSON.stringify({ event: 'charge.success', data: { id: 7, reference: 'TOP-999999-0123456789abcdef', amount: 1000, currency: 'NGN', status: 'success' } });
    for (const body of [other, unknown, other, unknown]) {
      const r = await postEvent(body, signPaystackBody(body, SECRET));
      expect(r.status).toBe(200);
    }
    expect(await eventsFor('TRF-123')).toEqual([expect.objectContaining({ event: 'transfer.success', outcome: 'ignored' })]);
    expect(await eventsFor('TOP-999999-0123456789abcdef')).toEqual([expect.objectContaining({ event: 'charge.success', outcome: 'unknown_reference' })]);
    // Settled when stored, and never queued for crediting.
    for (const ref of ['TRF-123', 'TOP-999999-0123456789abcdef']) expect(await settledCreditJobs(stack, ref)).toEqual([]);
    expect(await stack.db.oneFirst(q`SELECT count(*)::int FROM wallet_transactions WHERE reference = 'TOP-999999-0123456789abcdef'`)).toBe(0);
  });
});
