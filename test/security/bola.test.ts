import { sql } from 'slonik';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// Broken object-level authorisation: every endpoint that takes a reference, called with another
// organisation's reference. Requery answers exactly like an unknown reference (404: existence is
// never revealed); top-up verify refuses (403) and credits nothing.

let stack: Stack;
// Fresh organisations and references for every test.
let alice: OrgFixture;
let mallory: OrgFixture;
let aliceRef: string;
let aliceFixtureRef: string;
let aliceTopup: string;

beforeAll(async () => {
  stack = await startStack();
});
beforeEach(async () => {
  alice = await stack.createOrg({ units: 10 });
  mallory = await stack.createOrg({ units: 10 });
  const live = await stack.api('POST', '/v1/verify-nin', { token: alice.member.token, json: { nin: '23456789012', reason: 'corporate' } });
  expect(live.status).toBe(200);
  aliceRef = live.body.data.reference_id;
  const fixture = await stack.api('POST', '/v1/verify-nin', { token: alice.member.token, json: { nin: '12345678901', reason: 'corporate' } });
  aliceFixtureRef = fixture.body.data.reference_id;
  const t = await stack.api('POST', '/v1/topup/initialize', { token: alice.admin.token, form: { units: 100 } });
  aliceTopup = t.body.reference;
  // Paid at the processor (no webhook), so a verify by anyone would be able to credit it.
  await fetch(`${stack.paymentSim.url}/__sim/transactions/${aliceTopup}/pay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"webhook":"none"}' });
});
afterAll(async () => stack?.close());

describe('requery with another organisation\'s reference_id', () => {
  it('When Mallory requeries Alice\'s live or fixture reference, then 404 exactly like an unknown reference', async () => {
    const unknown = await stack.api('POST', '/v1/verify-nin/requery', { token: mallory.member.token, json: { reference_id: 'REF-ZZZZZZZZZZZZ' } });
    expect(unknown.status).toBe(404);
    for (const ref of [aliceRef, aliceFixtureRef]) {
      for (const token of [mallory.member.token, mallory.admin.token]) {
        const r = await stack.api('POST', '/v1/verify-nin/requery', { token, json: { reference_id: ref } });
        expect(r.status).toBe(404);
        expect(r.body).toEqual(unknown.body);
        expect(r.text).not.toContain(ref.slice(4));
      }
      // Alice herself still gets it.
      const own = await stack.api('POST', '/v1/verify-nin/requery', { token: alice.member.token, json: { reference_id: ref } });
      expect(own.status).toBe(200);
    }
  });

  it('When Mallory sends Alice\'s reference in other casings or with padding, then still 404 and nothing leaks', async () => {
    const malformed = { status: 400, body: { detail: 'reference_id: reference_id must be REF- followed by 12 characters A-Z or 0-9' } };
    // Padding is trimmed: the reference is then Alice's, answered exactly like an unknown one.
    const unknown = { status: 404, body: { detail: 'Unknown reference_id' } };
    const cases = [
      [aliceRef.toLowerCase(), malformed],
      [` ${aliceRef} `, unknown],
      // A control character is refused before anything is looked up, like any malformed value.
      [`${aliceRef}\n`, { status: 400, body: { detail: 'reference_id: must not contain control characters' } }],
      [aliceRef.replace('REF-', 'ref-'), malformed],
    ] as const;
    for (const [v, expected] of cases) {
      const r = await stack.api('POST', '/v1/verify-nin/requery', { token: mallory.member.token, json: { reference_id: v } });
      expect({ status: r.status, body: r.body }, JSON.stringify(v)).toEqual(expected);
      expect(JSON.stringify(r.body)).not.toMatch(/fname|lname|phone|image/);
    }
  });
});

describe('top-up verify with another organisation\'s reference', () => {
  it('When Mallory\'s administrator verifies Alice\'s paid top-up, then 403 and neither wallet is credited', async () => {
    const r = await stack.api('POST', '/v1/topup/verify', { token: mallory.admin.token, form: { reference: aliceTopup } });
    expect(r.status).toBe(403);
    expect(typeof r.body.detail).toBe('string');
    const credited = await stack.db.oneFirst(sql.unsafe`SELECT count(*)::int FROM wallet_transactions WHERE kind = 'topup' AND org_id IN (${alice.orgId}, ${mallory.orgId})`);
    expect(credited).toBe(0);
    const m = await stack.api('GET', '/v1/me', { token: mallory.admin.token });
    expect(m.body.organisation.units).toBe(10);
    // Alice's own administrator can.
    const own = await stack.api('POST', '/v1/topup/verify', { token: alice.admin.token, form: { reference: aliceTopup } });
    expect(own.status).toBe(200);
    expect(own.body.units_added).toBe(100);
  });

  it('When Mallory\'s team member tries it, then 403 as well', async () => {
    const r = await stack.api('POST', '/v1/topup/verify', { token: mallory.member.token, form: { reference: aliceTopup } });
    expect(r.status).toBe(403);
  });

  it('When Mallory verifies Alice\'s already credited top-up, then still 403, never "already credited"', async () => {
    const own = await stack.api('POST', '/v1/topup/verify', { token: alice.admin.token, form: { reference: aliceTopup } });
    expect(own.body.message).toBe('Top-up successful');
    const r = await stack.api('POST', '/v1/topup/verify', { token: mallory.admin.token, form: { reference: aliceTopup } });
    expect(r.status).toBe(403);
    expect(r.text).not.toMatch(/credited|new_balance/i);
  });
});
