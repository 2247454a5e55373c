import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { personRecordSchema } from '../../src/modules/verification/person.ts';
import { startStack, type Stack } from '../setup/harness.ts';

const REF = /^REF-[A-Z0-9]{12}$/;
const FIELDS = Object.keys(personRecordSchema.shape);

const walletRow = z.object({ units: z.coerce.number(), reserved: z.coerce.number() });
const ledgerRow = z.object({
  kind: z.string(),
  amount: z.coerce.number(),
  units_delta: z.coerce.number(),
  units_before: z.coerce.number(),
  units_after: z.coerce.number(),
  details: z.record(z.string(), z.unknown()),
  reference: z.string().nullable(),
});

function helpers(getStack: () => Stack) {
  return {
    wallet: (orgId: number) => getStack().db.one(sql.type(walletRow)`SELECT units, reserved FROM wallets WHERE org_id = ${orgId}`),
    ledger: (orgId: number) =>
      getStack().db.any(sql.type(ledgerRow)`
        SELECT kind, amount, units_delta, units_before, units_after, details, reference
        FROM wallet_transactions WHERE org_id = ${orgId} AND kind <> 'adjustment' ORDER BY id`),
    verificationCount: (orgId: number) =>
      getStack().db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM verifications WHERE org_id = ${orgId}`),
  };
}

/** The record without reference_id, checked against the contract's schema (every field, strings). */
function record(data: Record<string, unknown>) {
  const { reference_id, ...rest } = data;
  expect(reference_id).toMatch(REF);
  expect(Object.keys(rest).sort()).toEqual([...FIELDS].sort());
  return personRecordSchema.parse(rest);
}

let stack: Stack;
const { wallet, ledger, verificationCount } = helpers(() => stack);
const verifyNin = (token: string, nin: string, reason = 'corporate', path = '/v1/verify-nin') => stack.api('POST', path, { token, json: { nin, reason } });

beforeAll(async () => {
  stack = await startStack({ captureLogs: true });
});
afterAll(async () => stack?.close());

describe('fixture NINs', () => {
  it('When 12345678901 is verified by an organisation with no units and no subscription, then the full record comes back and nothing is charged', async () => {
    const org = await stack.createOrg({ units: 0, subscription: false });
    const first = await verifyNin(org.member.token, '12345678901');
    // The first call may have fetched the reasons list; a fixture lookup itself never goes upstream.
    const callsBefore = stack.identitySim.stats().calls;
    const second = await verifyNin(org.member.token, '12345678901');

    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const rec = record(first.body.data);
    for (const f of FIELDS) expect(rec[f as keyof typeof rec], f).not.toBe('');
    expect(rec.nin).toBe('12345678901');
    const jpeg = Buffer.from(rec.image, 'base64');
    expect(jpeg.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    expect(jpeg.subarray(-2)).toEqual(Buffer.from([0xff, 0xd9]));
    expect(jpeg.includes(Buffer.from([0xff, 0xc0]))).toBe(true); // a baseline frame header: a real image
    // Stable per fixture; the reference is new on each call.
    expect(second.body.data.transaction_id).toBe(rec.transaction_id);
    expect(second.body.data.reference_id).not.toBe(first.body.data.reference_id);

    expect(stack.identitySim.stats().calls).toBe(callsBefore);
    expect(await wallet(org.orgId)).toEqual({ units: 0, reserved: 0 });
    const lines = await ledger(org.orgId);
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line).toMatchObject({ kind: 'fixture_verification', amount: 0, units_delta: 0, units_before: 0, units_after: 0 });
      expect(line.details).toMatchObject({ fixture: true, outcome: 'found' });
    }
    expect(lines.map((l) => l.reference)).toEqual([first.body.data.reference_id, second.body.data.reference_id]);
  });

  it('When 12345678902 is verified, then a sparse record comes back with empty strings and a transaction id', async () => {
    const org = await stack.createOrg({ units: 2 });
    const res = await verifyNin(org.admin.token, '12345678902');
    expect(res.status).toBe(200);
    const rec = record(res.body.data);
    for (const f of ['fname', 'lname', 'dob', 'gender', 'transaction_id'] as const) expect(rec[f]).not.toBe('');
    for (const f of ['mname', 'phone', 'residenceAdress', 'residenceTown', 'residenceLga', 'residenceState', 'image'] as const) expect(rec[f]).toBe('');
    expect(await wallet(org.orgId)).toEqual({ units: 2, reserved: 0 });
    const [line] = await ledger(org.orgId);
    expect(line).toMatchObject({ kind: 'fixture_verification', amount: 0, units_before: 2, units_after: 2 });
  });

  it('When 99999999999 is verified, then 404 NIN not found, recorded with amount 0 and the fixture flag', async () => {
    const org = await stack.createOrg({ units: 0, subscription: false });
    const res = await verifyNin(org.member.token, '99999999999');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'NIN not found' });
    const lines = await ledger(org.orgId);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ amount: 0, units_before: 0, units_after: 0, details: { fixture: true, outcome: 'not_found' } });
  });

  it('When a fixture NIN is sent with an unknown reason, then it is refused like a live call (400)', async () => {
    const org = await stack.createOrg({ units: 0 });
    const res = await verifyNin(org.member.token, '12345678901', 'Corporate');
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/Invalid reason/);
    expect(await ledger(org.orgId)).toHaveLength(0);
  });

  it('When the unversioned path is used, then it behaves like the versioned one', async () => {
    const org = await stack.createOrg({ units: 0 });
    const res = await verifyNin(org.member.token, '12345678901', 'corporate', '/verify-nin');
    expect(res.status).toBe(200);
    expect(res.body.data.nin).toBe('12345678901');
  });
});

describe('live verification', () => {
  it('When a live NIN is found, then the normalised record comes back and exactly one unit is debited at the unit cost', async () => {
    const org = await stack.createOrg({ units: 3, unitCostKobo: 12500 });
    const res = await verifyNin(org.member.token, '31415926535');
    expect(res.status).toBe(200);
    const rec = record(res.body.data);
    expect(rec.nin).toBe('31415926535');
    expect(rec.transaction_id).toMatch(/^SBX-/);

    expect(await wallet(org.orgId)).toEqual({ units: 2, reserved: 0 });
    const lines = await ledger(org.orgId);
    expect(lines).toEqual([
      {
        kind: 'verification',
        amount: 12500,
        units_delta: -1,
        units_before: 3,
        units_after: 2,
        details: { mode: 'nin', reason: 'corporate', transaction_id: rec.transaction_id },
        reference: res.body.data.reference_id,
      },
    ]);
    // The query and the record are stored encrypted, never in clear.
    const row = await stack.db.one(sql.type(z.object({ query_enc: z.instanceof(Buffer), record_enc: z.instanceof(Buffer), status: z.string(), holds_unit: z.boolean(), key_id: z.string() }))`
      SELECT query_enc, record_enc, status, holds_unit, key_id FROM verifications WHERE reference_id = ${res.body.data.reference_id}`);
    expect(row).toMatchObject({ status: 'found', holds_unit: false, key_id: 'dev1' });
    expect(row.query_enc.includes('31415926535')).toBe(false);
    expect(row.record_enc.includes(rec.fname)).toBe(false);
  });

  it('When simulator records of every key variant are verified, then each is normalised to the one schema', async () => {
    const org = await stack.createOrg({ units: 12 });
    const nins = ['10000000001', '10000000002', '10000000003', '10000000004', '27182818284', '16180339887', '14142135623', '17320508075', '22360679774', '30000000007'];
    const results = await Promise.all(nins.map((nin) => verifyNin(org.member.token, nin)));
    for (const [i, res] of results.entries()) {
      expect(res.status, nins[i]).toBe(200);
      const rec = record(res.body.data);
      expect(rec.nin).toBe(nins[i]);
      expect(rec.dob).toMatch(/^\d{2}-\d{2}-\d{4}$/);
      expect(['M', 'F']).toContain(rec.gender);
      if (rec.image) expect(Buffer.from(rec.image, 'base64').subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    }
    expect(await wallet(org.orgId)).toEqual({ units: 2, reserved: 0 });
  });

  it('When the NIN is unknown upstream (starts with 0), then 404 NIN not found and nothing is charged', async () => {
    const org = await stack.createOrg({ units: 2 });
    const res = await verifyNin(org.member.token, '01234567890');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'NIN not found' });
    expect(await wallet(org.orgId)).toEqual({ units: 2, reserved: 0 });
    expect(await ledger(org.orgId)).toHaveLength(0);
  });

  it('When the wallet is empty, then 402 and nothing is persisted', async () => {
    const org = await stack.createOrg({ units: 0 });
    const res = await verifyNin(org.member.token, '31415926535');
    expect(res.status).toBe(402);
    expect(res.body).toEqual({ detail: 'Insufficient units in organisation wallet' });
    expect(await verificationCount(org.orgId)).toBe(0);
  });

  it('When the subscription is inactive, then a live NIN is refused with 403 and nothing is charged', async () => {
    const org = await stack.createOrg({ units: 5, subscription: false });
    const res = await verifyNin(org.member.token, '31415926535');
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/subscription/i);
    expect(await wallet(org.orgId)).toEqual({ units: 5, reserved: 0 });
    expect(await verificationCount(org.orgId)).toBe(0);
  });

  it('When 200 live verifications race on a wallet of 50 units, then exactly 50 succeed and 150 get 402', async () => {
    const org = await stack.createOrg({ units: 50 });
    // The race is between holds on the wallet row: the in-flight cap is raised out of its way.
    await stack.db.query(sql.unsafe`UPDATE organisations SET max_in_flight = 1000 WHERE id = ${org.orgId}`);
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => verifyNin(org.member.token, `4${String(i).padStart(10, '0')}`)),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(50);
    expect(statuses.filter((s) => s === 402)).toHaveLength(150);
    expect(await wallet(org.orgId)).toEqual({ units: 0, reserved: 0 });
    const lines = await ledger(org.orgId);
    expect(lines).toHaveLength(50);
    expect(new Set(lines.map((l) => l.reference)).size).toBe(50);
    expect(lines.every((l) => l.kind === 'verification' && l.units_delta === -1)).toBe(true);
  }, 60_000);
});

describe('upstream faults', () => {
  it('When the upstream fails twice with 503 then answers (5000), then 200 and one debit', async () => {
    const org = await stack.createOrg({ units: 2 });
    const res = await verifyNin(org.member.token, '50001234567');
    expect(res.status).toBe(200);
    expect(res.body.data.nin).toBe('50001234567');
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 0 });
    expect(await ledger(org.orgId)).toHaveLength(1);
  });

  it('When the upstream keeps answering 503 (5001), then 502 with the reference_id and nothing is charged', async () => {
    const org = await stack.createOrg({ units: 2 });
    const res = await verifyNin(org.member.token, '50011234567');
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ detail: 'Identity authority unavailable, nothing was charged', reference_id: expect.stringMatching(REF), code: 'upstream_unavailable' });
    expect(await wallet(org.orgId)).toEqual({ units: 2, reserved: 0 });
    expect(await ledger(org.orgId)).toHaveLength(0);
    const again = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: res.body.reference_id } });
    expect(again.status).toBe(502);
    expect(again.body.reference_id).toBe(res.body.reference_id);
  });

  it('When the upstream keeps answering 429 (5003), then 503 with the reference_id and nothing is charged', async () => {
    const org = await stack.createOrg({ units: 2 });
    const res = await verifyNin(org.member.token, '50031234567');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ reference_id: expect.stringMatching(REF), code: 'upstream_rate_limited' });
    expect(res.body.detail).toMatch(/nothing was charged/);
    expect(await wallet(org.orgId)).toEqual({ units: 2, reserved: 0 });
    expect(await ledger(org.orgId)).toHaveLength(0);
  });
});

describe('request validation', () => {
  it('When nin is missing, then 422 with the field errors', async () => {
    const org = await stack.createOrg({ units: 1 });
    const res = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { reason: 'corporate' } });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].loc).toEqual(['nin']);
  });

  it('When nin has 10 digits, then 400 naming the field', async () => {
    const org = await stack.createOrg({ units: 1 });
    const res = await verifyNin(org.member.token, '1234567890');
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^nin: /);
  });

  it('When the body is not JSON, then 415; when the JSON is malformed, then 400', async () => {
    const org = await stack.createOrg({ units: 1 });
    const form = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, raw: 'nin=12345678901&reason=corporate', contentType: 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
    const broken = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, raw: '{"nin": "1234', contentType: 'application/json' });
    expect(broken.status).toBe(400);
  });

  it('When no token is sent, then 401 before anything else', async () => {
    const res = await stack.api('POST', '/v1/verify-nin', { json: { nin: '12345678901', reason: 'corporate' } });
    expect(res.status).toBe(401);
  });
});

it('When verifications ran, then no NIN or name reached a log line', async () => {
  const text = stack.logs.join('\n');
  expect(text.length).toBeGreaterThan(0);
  for (const nin of ['31415926535', '50011234567', '01234567890', '12345678901']) expect(text).not.toContain(nin);
  expect(text).not.toContain('Adaeze');
});

describe('upstream timeouts (IDENTITY_TIMEOUT_MS 300, 2 attempts)', () => {
  let slow: Stack;
  beforeAll(async () => {
    slow = await startStack({ env: { IDENTITY_TIMEOUT_MS: '300', IDENTITY_MAX_ATTEMPTS: '2' } });
  });
  afterAll(async () => slow?.close());

  it('When the upstream never answers (5002), then 502 with code upstream_timeout and nothing is charged', async () => {
    const org = await slow.createOrg({ units: 1 });
    const started = Date.now();
    const res = await slow.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '50021234567', reason: 'corporate' } });
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ reference_id: expect.stringMatching(REF), code: 'upstream_timeout' });
    expect(Date.now() - started).toBeLessThan(3000);
    const w = await slow.db.one(sql.type(walletRow)`SELECT units, reserved FROM wallets WHERE org_id = ${org.orgId}`);
    expect(w).toEqual({ units: 1, reserved: 0 });
  });
});
