import { createHmac } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { signPaystackBody } from '../../src/adapters/payment-processor/signature.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { finishedJob, settledCreditJobs, webhookCreditJobId } from '../setup/jobs.ts';

// The processor webhook is unauthenticated except for its signature. Whatever arrives, signed or
// not, the wallet is credited only with what the processor itself confirms, once per reference.

let stack: Stack;
// Each test has an organisation of its own, so its ledger holds only what that test did.
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack({ webhookMode: 'none' });
});
beforeEach(async () => {
  org = await stack.createOrg({ units: 0 });
});
afterAll(async () => stack?.close());

const secret = () => stack.config.PAYSTACK_SECRET_KEY;
const post = (body: string, signature?: string) =>
  stack.api('POST', '/v1/webhooks/paystack', { raw: body, contentType: 'application/json', headers: signature === undefined ? {} : { 'x-paystack-signature': signature } });

async function initialize(units = 100): Promise<{ reference: string; total_amount: number }> {
  const r = await stack.api('POST', '/v1/topup/initialize', { token: org.admin.token, form: { units } });
  expect(r.status).toBe(200);
  return r.body;
}
const pay = (ref: string) => fetch(`${stack.paymentSim.url}/__sim/transactions/${ref}/pay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"webhook":"none"}' });
async function processorEvent(ref: string): Promise<Record<string, any>> {
  const v = await fetch(`${stack.paymentSim.url}/transaction/verify/${ref}`, { headers: { authorization: `Bearer ${secret()}` } });
  return { event: 'charge.success', data: ((await v.json()) as { data: unknown }).data };
}
const ledger = () =>
  stack.db.one(sql.type(z.object({ units: z.coerce.number(), lines: z.coerce.number() }))`
    SELECT w.units, (SELECT count(*) FROM wallet_transactions t WHERE t.org_id = w.org_id AND t.kind = 'topup') AS lines FROM wallets w WHERE org_id = ${org.orgId}`);
const statusOf = (ref: string) => stack.db.oneFirst(sql.type(z.object({ status: z.string() }))`SELECT status FROM topups WHERE reference = ${ref}`);
async function settle(ref: string, want: string): Promise<string> {
  let s = '';
  for (let i = 0; i < 100; i++) {
    s = await statusOf(ref);
    if (s === want) return s;
    await new Promise((r) => setTimeout(r, 100));
  }
  return s;
}
const storedEvents = (ref: string) => stack.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM processor_events WHERE reference = ${ref}`);
/** The credit job a validly signed webhook body enqueued, once it has finished for good. */
const creditJobOf = (body: string) => finishedJob(stack, 'credits', webhookCreditJobId(body));

describe('POST /webhooks/paystack', () => {
  it('When a paid reference\'s event is unsigned, signed with another key, or carries a malformed signature, then 401 and nothing is credited', async () => {
    const t = await initialize();
    await pay(t.reference);
    const body = JSON.stringify(await processorEvent(t.reference));
    const attempts: (string | undefined)[] = [
      undefined,
      '',
      signPaystackBody(body, 'sk_test_someone_else'),
      signPaystackBody(body, secret()).slice(0, 127),
      `${signPaystackBody(body, secret())}00`,
      'g'.repeat(128),
      createHmac256(body),
      signPaystackBody(`${body} `, secret()),
    ];
    for (const sig of attempts) {
      const r = await post(body, sig);
      expect(r.status, String(sig).slice(0, 20)).toBe(401);
      expect(r.body).toEqual({ detail: 'Invalid signature' });
    }
    // A refused event is neither stored nor queued before its 401 is sent: once the 401s are in,
    // nothing exists that could still credit.
    expect(await storedEvents(t.reference)).toBe(0);
    expect(await settledCreditJobs(stack, t.reference)).toEqual([]);
    expect(await statusOf(t.reference)).toBe('pending');
    expect(await ledger()).toEqual({ units: 0, lines: 0 });
  });

  it('When a valid event is replayed many times, concurrently and later, then the reference is credited once', async () => {
    const t = await initialize(200);
    await pay(t.reference);
    const body = JSON.stringify(await processorEvent(t.reference));
    const sig = signPaystackBody(body, secret());
    const first = await Promise.all(Array.from({ length: 8 }, () => post(body, sig)));
    expect(first.every((r) => r.status === 200)).toBe(true);
    expect(await settle(t.reference, 'credited')).toBe('credited');
    for (let i = 0; i < 3; i++) expect((await post(body, sig)).status).toBe(200);
    // Every delivery was queued (as one job id) before it was answered: once every credit job of the
    // reference has finished, the ledger is final.
    const jobs = await settledCreditJobs(stack, t.reference);
    expect(jobs.map((j) => [j.id, j.state, j.returnvalue.outcome])).toEqual([[webhookCreditJobId(body), 'completed', 'credited']]);
    expect(await ledger()).toEqual({ units: 200, lines: 1 });
  });

  it('When a re-signed event claims a different amount, then the credit follows what the processor confirms, never the claim', async () => {
    const before = await ledger();
    // Unpaid reference with an inflated, validly signed claim: the processor says not paid.
    const unpaid = await initialize(100);
    const claim = { event: 'charge.success', data: { id: 9, reference: unpaid.reference, amount: unpaid.total_amount * 50, currency: 'NGN', status: 'success', paid_at: new Date().toISOString(), fees: 0 } };
    const cb = JSON.stringify(claim);
    expect((await post(cb, signPaystackBody(cb, secret()))).status).toBe(200);
    // Paid reference whose event is rewritten to a larger amount and re-signed.
    const paid = await initialize(300);
    await pay(paid.reference);
    const real = await processorEvent(paid.reference);
    const inflated = JSON.stringify({ ...real, data: { ...real.data, amount: real.data.amount * 10 } });
    expect((await post(inflated, signPaystackBody(inflated, secret()))).status).toBe(200);
    expect(await settle(paid.reference, 'credited')).toBe('credited');
    const deflated = JSON.stringify({ ...real, data: { ...real.data, amount: 1 } });
    expect((await post(deflated, signPaystackBody(deflated, secret()))).status).toBe(200);
    expect((await creditJobOf(cb)).returnvalue).toEqual({ outcome: 'not_paid', processorStatus: 'abandoned' });
    expect((await creditJobOf(inflated)).returnvalue).toMatchObject({ outcome: 'credited', unitsAdded: 300 });
    expect((await creditJobOf(deflated)).returnvalue).toMatchObject({ outcome: 'already_credited', unitsAdded: 300 });
    expect((await settledCreditJobs(stack, unpaid.reference)).map((j) => j.state)).toEqual(['completed']);
    expect((await settledCreditJobs(stack, paid.reference)).map((j) => j.state)).toEqual(['completed', 'completed']);
    expect(await statusOf(unpaid.reference)).toBe('pending');
    const after = await ledger();
    expect(after.units - before.units).toBe(300);
    expect(after.lines - before.lines).toBe(1);
  });

  it('When the processor itself reports a different amount than was asked (tampered payment), then nothing is credited', async () => {
    const before = await ledger();
    const t = await initialize(100);
    await fetch(`${stack.paymentSim.url}/__sim/transactions/${t.reference}/tamper`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount: 100 }) });
    await pay(t.reference);
    const body = JSON.stringify(await processorEvent(t.reference));
    expect((await post(body, signPaystackBody(body, secret()))).status).toBe(200);
    expect((await creditJobOf(body)).returnvalue).toEqual({ outcome: 'amount_mismatch' });
    expect((await settledCreditJobs(stack, t.reference)).map((j) => j.state)).toEqual(['completed']);
    expect(await statusOf(t.reference)).toBe('amount_mismatch');
    expect(await ledger()).toEqual(before);
  });

  it('When a validly signed event names an unknown reference, then it is acknowledged and nothing is credited', async () => {
    const before = await ledger();
    const expected = { [`TOP-${org.orgId}-0123456789abcdef`]: 'unknown_reference', 'TOP-999999-fedcba9876543210': 'unknown_reference', 'SOMETHING-ELSE': 'ignored', 'REF-AAAAAAAAAAAA': 'ignored' };
    for (const reference of Object.keys(expected)) {
      const body = JSON.stringify({ event: 'charge.success', data: { id: 1, reference, amount: 1_000_000, currency: 'NGN', status: 'success', paid_at: new Date().toISOString(), fees: 0 } });
      const r = await post(body, signPaystackBody(body, secret()));
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ status: 'ok' });
    }
    // Each was settled when it was stored (no top-up to credit), and none was queued for crediting.
    const rows = await stack.db.any(sql.type(z.object({ reference: z.string(), outcome: z.string().nullable(), processed: z.boolean() }))`
      SELECT reference, outcome, processed_at IS NOT NULL AS processed FROM processor_events WHERE reference = ANY(${sql.array(Object.keys(expected), 'text')}) ORDER BY id`);
    expect(rows).toEqual(Object.entries(expected).map(([reference, outcome]) => ({ reference, outcome, processed: true })));
    for (const reference of Object.keys(expected)) expect(await settledCreditJobs(stack, reference)).toEqual([]);
    expect(await ledger()).toEqual(before);
    const topups = await stack.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM topups WHERE reference = ANY(${sql.array(Object.keys(expected), 'text')})`);
    expect(topups).toBe(0);
  });
});

describe('POST /webhooks/paystack with characters PostgreSQL cannot store', () => {
  it('When a validly signed event carries a NUL character or a lone surrogate escape, then 400 and nothing is stored', async () => {
    const failures: string[] = [];
    const before = await stack.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM processor_events`);
    const bodies = [
      '{"event":"charge.success","data":{"reference":"TOP-1-0123456789abcdef","note":"\\u0000"}}',
      '{"event":"paymentrequest.pending","data":{"reference":"x","amount":"\\u0000"}}',
      '{"event":"charge.success\\u0000","data":{}}',
      '{"event":"transfer.success","data":{"reference":"\\ud800"}}',
    ];
    for (const body of bodies) {
      const r = await post(body, signPaystackBody(body, secret()));
      if (r.status !== 400 || r.body?.detail !== 'Body contains characters that cannot be stored') failures.push(`${body} -> ${r.status} ${r.text}`);
    }
    expect(failures).toEqual([]);
    expect(await stack.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM processor_events`)).toBe(before);
  });
});

function createHmac256(body: string): string {
  // Right secret, wrong algorithm (and length).
  return createHmac('sha256', secret()).update(body).digest('hex');
}
