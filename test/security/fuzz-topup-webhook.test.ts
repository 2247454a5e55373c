import fc from 'fast-check';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { signPaystackBody } from '../../src/adapters/payment-processor/signature.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { queuesIdle } from '../setup/jobs.ts';
import { contentTypes, extraHeaders, formBody, fuzzRuns, headerValue, jsonBody, nastyString, nastyValue, newTally, querySuffix, sendAndCheck, type Tally } from './fuzz-kit.ts';

// Property-based fuzzing of the top-up endpoints and the processor webhook. Nothing here pays, so
// nothing may ever be credited: the wallet and the ledger must end exactly as they started.

let stack: Stack;
const INITIAL = 500;

beforeAll(async () => {
  stack = await startStack({ env: { RATE_LIMIT_PER_TOKEN: '1000000', RATE_LIMIT_PER_ORG: '1000000', TOPUP_WAIT_MS: '4000' } });
});
afterAll(async () => stack?.close());

type Target = { org: OrgFixture; pendingRefs: string[]; tally: Tally };

/** Each test fuzzes an organisation of its own, with real, unpaid references the fuzzer can aim at. */
async function target(): Promise<Target> {
  const org = await stack.createOrg({ units: INITIAL });
  const pendingRefs: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await stack.api('POST', '/v1/topup/initialize', { token: org.admin.token, form: { units: 100 } });
    expect(r.status).toBe(200);
    pendingRefs.push(r.body.reference);
  }
  return { org, pendingRefs, tally: newTally() };
}

/**
 * Nothing here pays, so nothing may be credited. Signed events and verify calls queue credit jobs
 * that re-verify with the processor (unpaid): once every queue is idle they have all run.
 */
async function expectNothingCredited(t: Target, runs: number) {
  process.stdout.write(`fuzz statuses: ${JSON.stringify(t.tally.byStatus)} (${t.tally.requests} requests)\n`);
  if (process.env.FUZZ_DEBUG) process.stdout.write(`${JSON.stringify(t.tally.byDetail, null, 1)}\n`);
  // One request per run: the property ran as often as asked.
  expect(t.tally.requests).toBe(fuzzRuns(runs).numRuns);
  await queuesIdle(stack);
  const row = await stack.db.one(sql.type(z.object({ units: z.coerce.number(), lines: z.coerce.number(), credited: z.coerce.number() }))`
    SELECT w.units,
      (SELECT count(*) FROM wallet_transactions t WHERE t.org_id = w.org_id AND t.kind = 'topup') AS lines,
      (SELECT count(*) FROM topups tp WHERE tp.status = 'credited') AS credited
    FROM wallets w WHERE w.org_id = ${t.org.orgId}`);
  expect(row).toEqual({ units: INITIAL, lines: 0, credited: 0 });
  const allTopupLines = await stack.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM wallet_transactions WHERE kind = 'topup'`);
  expect(allTopupLines).toBe(0);
}

const auth = (token: string) =>
  fc.oneof({ weight: 8, arbitrary: fc.constant(`Bearer ${token}`) }, { weight: 1, arbitrary: fc.constantFrom('', 'Bearer', `Bearer ${token}.x`) }, { weight: 1, arbitrary: headerValue });

const unitsLike = fc.oneof(fc.integer({ min: -1000, max: 1_000_000 }).map(String), fc.constantFrom('100', '200', '150', '0', '-100', '1e2', '100.0', ' 100', '９００', '1'.padEnd(40, '0'), '9'.repeat(400), '2147483700', '9007199254740993'), nastyString);
const referenceLike = (pendingRefs: string[]) => fc.oneof(fc.constantFrom(...pendingRefs), fc.stringMatching(/^TOP-[0-9]{1,4}-[0-9a-f]{16}$/), nastyString);

async function formProperty(t: Target, path: string, fields: Record<string, fc.Arbitrary<unknown>>, runs: number) {
  const arb = fc.record({ query: querySuffix, auth: auth(t.org.admin.token), contentType: contentTypes('application/x-www-form-urlencoded'), extra: extraHeaders, body: formBody(fields) });
  await fc.assert(
    fc.asyncProperty(arb, async ({ query, auth: a, contentType, extra, body }) => {
      await sendAndCheck(stack.url, { method: 'POST', path: `${path}${query}`, headers: { ...extra, authorization: a, 'content-type': contentType }, body }, t.tally);
    }),
    fuzzRuns(runs),
  );
}

it('When POST /topup/initialize gets hostile forms, queries and headers, then never a 5xx and nothing is credited', { timeout: 60_000 }, async () => {
  const t = await target();
  await formProperty(t, '/v1/topup/initialize', { units: unitsLike }, 450);
  await expectNothingCredited(t, 450);
});

it('When POST /topup/verify gets hostile forms, then never a 5xx and nothing is credited', { timeout: 60_000 }, async () => {
  const t = await target();
  await formProperty(t, '/v1/topup/verify', { reference: referenceLike(t.pendingRefs) }, 350);
  await expectNothingCredited(t, 350);
});

it('When the webhook gets unsigned, badly signed or validly signed hostile events, then never a 5xx and nothing is credited', { timeout: 60_000 }, async () => {
  const t = await target();
  const eventData = fc.record(
    {
      id: nastyValue,
      reference: referenceLike(t.pendingRefs),
      amount: fc.oneof(fc.integer({ min: 0, max: 10_000_000 }), nastyValue),
      currency: fc.oneof(fc.constant('NGN'), nastyValue),
      status: fc.oneof(fc.constantFrom('success', 'failed', 'abandoned'), nastyValue),
      paid_at: nastyValue,
      fees: nastyValue,
      metadata: nastyValue,
      customer: nastyValue,
    },
    { requiredKeys: [] },
  );
  const body = fc.oneof(
    { weight: 4, arbitrary: fc.record({ event: fc.oneof(fc.constantFrom('charge.success', 'transfer.success', 'paymentrequest.pending'), nastyString), data: fc.oneof({ weight: 4, arbitrary: eventData }, { weight: 1, arbitrary: nastyValue }) }).map((e) => JSON.stringify(e)) },
    { weight: 2, arbitrary: jsonBody({ event: nastyValue, data: nastyValue }) },
  );
  const signing = fc.constantFrom('valid', 'valid', 'valid', 'wrong-key', 'garbage', 'none', 'uppercase');
  const arb = fc.record({ query: querySuffix, contentType: contentTypes('application/json'), extra: extraHeaders, body, signing, garbage: headerValue });
  await fc.assert(
    fc.asyncProperty(arb, async ({ query, contentType, extra, body: b, signing: s, garbage }) => {
      const secret = stack.config.PAYSTACK_SECRET_KEY;
      const sig =
        s === 'valid' ? signPaystackBody(b, secret) : s === 'uppercase' ? signPaystackBody(b, secret).toUpperCase() : s === 'wrong-key' ? signPaystackBody(b, `${secret}x`) : s === 'garbage' ? garbage : '';
      const { 'x-paystack-signature': _ignored, ...rest } = extra;
      await sendAndCheck(stack.url, { method: 'POST', path: `/v1/webhooks/paystack${query}`, headers: { ...rest, 'content-type': contentType, 'x-paystack-signature': sig }, body: b }, t.tally);
    }),
    fuzzRuns(650),
  );
  await expectNothingCredited(t, 650);
});
