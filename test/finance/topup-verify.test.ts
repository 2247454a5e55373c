import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signPaystackBody } from '../../src/adapters/payment-processor/signature.ts';
import { startStack, type Stack } from '../setup/harness.ts';
import { until } from '../setup/wait.ts';

// Test queries read loosely typed rows; the service's own queries are the typed ones.
const q = sql.type(z.record(z.string(), z.any()));

const SECRET = 'sk_test_harness_secret';

let stack: Stack;
beforeAll(async () => {
  // A short wait so that the timeout test stays quick; every other verify finishes far inside it.
  stack = await startStack({ env: { TOPUP_WAIT_MS: '4000' } });
});
afterAll(async () => stack?.close());


const balance = async (token: string): Promise<number> => (await stack.api('GET', '/v1/me', { token })).body.organisation.units;
const verify = (token: string, reference: string) => stack.api('POST', '/v1/topup/verify', { token, form: { reference } });
const ledgerFor = (reference: string) =>
  stack.db.any(q`SELECT units_delta::int, units_after::int, details FROM wallet_transactions WHERE reference = ${reference} AND kind = 'topup'`);

async function initialize(token: string, units = 100) {
  const r = await stack.api('POST', '/v1/topup/initialize', { token, form: { units } });
  expect(r.status).toBe(200);
  return r.body as { reference: string; total_amount: number; base_amount: number };
}

async function simulator(reference: string, action: 'pay' | 'fail', webhook?: string) {
  const r = await fetch(`${stack.paymentSim.url}/__sim/transactions/${reference}/${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(webhook ? { webhook } : {}),
  });
  expect(r.status).toBe(200);
}

/** The body Paystack would send for this payment, signed as Paystack signs it. */
function chargeSuccess(reference: string, amount: number) {
  const body = JSON.stringify({ event: 'charge.success', data: { id: 4242, reference, amount, currency: 'NGN', status: 'success', paid_at: new Date().toISOString() } });
  return { body, signature: signPaystackBody(body, SECRET) };
}

const postEvent = (e: { body: string; signature: string }) =>
  stack.api('POST', '/v1/webhooks/paystack', { raw: e.body, contentType: 'application/json', headers: { 'x-paystack-signature': e.signature } });

describe('POST /topup/verify', () => {
  it('When the payer has not paid yet, then 400, nothing is credited, and the top-up stays open', async () => {
    const org = await stack.createOrg({ units: 3 });
    const t = await initialize(org.admin.token);
    const r = await verify(org.admin.token, t.reference);
    expect(r.status).toBe(400);
    expect(r.body.detail).toBe('Payment not successful (status: abandoned); nothing was credited');
    expect(await balance(org.admin.token)).toBe(3);
    const row = await stack.db.one(q`SELECT status, processor_status FROM topups WHERE reference = ${t.reference}`);
    expect(row).toEqual({ status: 'pending', processor_status: 'abandoned' });

    // The payer can still pay afterwards, and the webhook credits it.
    await simulator(t.reference, 'pay');
    expect(await until(() => balance(org.admin.token), (u) => u > 3)).toBe(103);
  });

  it('When the webhook has already credited, then verify says "Top-up already credited" with the same numbers', async () => {
    const org = await stack.createOrg();
    const t = await initialize(org.admin.token, 200);
    await simulator(t.reference, 'pay');
    await until(() => balance(org.admin.token), (u) => u > 0);
    const r = await verify(org.admin.token, t.reference);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ message: 'Top-up already credited', units_added: 200, new_balance: 200, price_paid: t.base_amount });
  });

  it('When verify runs before the webhook, then verify credits and the webhook credits nothing more', async () => {
    const org = await stack.createOrg({ units: 1 });
    const t = await initialize(org.admin.token);
    await simulator(t.reference, 'pay', 'none');
    const first = await verify(org.admin.token, t.reference);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ message: 'Top-up successful', units_added: 100, new_balance: 101, price_paid: t.base_amount });

    const late = await postEvent(chargeSuccess(t.reference, t.total_amount));
    expect(late.status).toBe(200);
    const events = await until(
      () => stack.db.any(q`SELECT outcome FROM processor_events WHERE reference = ${t.reference}`),
      (e) => e[0]?.outcome != null,
    );
    expect(events).toEqual([{ outcome: 'already_credited' }]);
    expect(await balance(org.admin.token)).toBe(101);
    expect(await ledgerFor(t.reference)).toHaveLength(1);

    const again = await verify(org.admin.token, t.reference);
    expect(again.body).toEqual({ message: 'Top-up already credited', units_added: 100, new_balance: 101, price_paid: t.base_amount });
  });

  it('When 20 verify calls and 5 duplicate webhooks race for one payment, then it is credited exactly once', async () => {
    const org = await stack.createOrg();
    const t = await initialize(org.admin.token, 500);
    await simulator(t.reference, 'pay', 'none');
    const event = chargeSuccess(t.reference, t.total_amount);
    const [verifies, hooks] = await Promise.all([
      Promise.all(Array.from({ length: 20 }, () => verify(org.admin.token, t.reference))),
      Promise.all(Array.from({ length: 5 }, () => postEvent(event))),
    ]);
    expect(hooks.map((h) => h.status)).toEqual([200, 200, 200, 200, 200]);
    expect(verifies.map((v) => v.status)).toEqual(Array(20).fill(200));
    for (const v of verifies) expect(v.body).toMatchObject({ units_added: 500, new_balance: 500, price_paid: t.base_amount });

    await until(() => stack.db.any(q`SELECT outcome FROM processor_events WHERE reference = ${t.reference}`), (e) => e[0]?.outcome != null);
    const lines = await ledgerFor(t.reference);
    expect(lines).toHaveLength(1);
    expect(await balance(org.admin.token)).toBe(500);
    // Exactly one caller is told it credited, unless the webhook's job got there first.
    const successes = verifies.filter((v) => v.body.message === 'Top-up successful').length;
    expect(successes).toBe(lines[0]!.details.source === 'verify' ? 1 : 0);
    expect(verifies.filter((v) => v.body.message === 'Top-up already credited').length).toBe(20 - successes);
    expect(await stack.db.oneFirst(q`SELECT count(*)::int FROM processor_events WHERE reference = ${t.reference}`)).toBe(1);
    const lifetime = await stack.db.oneFirst(q`SELECT lifetime_units::int FROM organisations WHERE id = ${org.orgId}`);
    expect(lifetime).toBe(500);
    expect(await stack.db.oneFirst(q`SELECT count(*)::int FROM outbox WHERE dedupe_key = ${`receipt-${t.reference}`}`)).toBe(1);
  });

  it('When the payment failed, then 400 with the processor status and nothing is credited', async () => {
    const org = await stack.createOrg();
    const t = await initialize(org.admin.token);
    await simulator(t.reference, 'fail');
    const r = await verify(org.admin.token, t.reference);
    expect(r.status).toBe(400);
    expect(r.body.detail).toBe('Payment not successful (status: failed); nothing was credited');
    expect(await balance(org.admin.token)).toBe(0);
  });

  it("When the reference is another organisation's, then 403; a member gets 403; unknown is 404; bad input 400/422/415", async () => {
    const owner = await stack.createOrg();
    const other = await stack.createOrg();
    const t = await initialize(owner.admin.token);
    const foreign = await verify(other.admin.token, t.reference);
    expect(foreign.status).toBe(403);
    expect(foreign.body.detail).toBe('This top-up belongs to another organisation');
    expect((await verify(owner.member.token, t.reference)).status).toBe(403);
    const unknown = await verify(owner.admin.token, `TOP-${owner.orgId}-0000000000000000`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toBe('Top-up reference not found');
    expect((await verify(owner.admin.token, 'REF-NOTATOPUP')).status).toBe(400);
    expect((await stack.api('POST', '/v1/topup/verify', { token: owner.admin.token, form: {} })).status).toBe(422);
    expect((await stack.api('POST', '/v1/topup/verify', { token: owner.admin.token, json: { reference: t.reference } })).status).toBe(415);
    expect((await stack.api('POST', '/topup/verify', { form: { reference: t.reference } })).status).toBe(401);
  });

  it('When no worker answers within TOPUP_WAIT_MS, then 504 with the reference', async () => {
    const org = await stack.createOrg();
    const t = await initialize(org.admin.token);
    await simulator(t.reference, 'pay', 'none');
    await stack.workers!.close();
    try {
      const r = await verify(org.admin.token, t.reference);
      expect(r.status).toBe(504);
      expect(r.body).toEqual({ detail: expect.stringMatching(/retry/), reference: t.reference });
    } finally {
      // The other tests of this file need workers: they start again (and run the job left queued).
      await stack.startWorkers();
    }
  });
});
