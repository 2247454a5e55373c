import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { personRecordSchema } from '../../src/modules/verification/person.ts';
import { startStack, type Stack } from '../setup/harness.ts';

/**
 * POST /verify-nin/vnin over HTTP, API, queue and worker as in production, against the identity
 * simulator, which issues vNINs (POST /sandbox/vnin) and checks them like NIMC.
 */
const REF = /^REF-[A-Z0-9]{12}$/;
const PERSON_NIN = '31415926535';
const walletRow = z.object({ units: z.coerce.number(), reserved: z.coerce.number() });
const ledgerRow = z.object({ kind: z.string(), amount: z.coerce.number(), units_delta: z.coerce.number(), details: z.record(z.string(), z.unknown()) });
const rowOf = z.object({ reference_id: z.string(), mode: z.string(), status: z.string(), failure_code: z.string().nullable(), fixture: z.boolean() });

let stack: Stack;
const wallet = (orgId: number) => stack.db.one(sql.type(walletRow)`SELECT units, reserved FROM wallets WHERE org_id = ${orgId}`);
const ledger = (orgId: number) =>
  stack.db.any(sql.type(ledgerRow)`SELECT kind, amount, units_delta, details FROM wallet_transactions WHERE org_id = ${orgId} AND kind <> 'adjustment' ORDER BY id`);
const lastRow = (orgId: number) => stack.db.one(sql.type(rowOf)`SELECT reference_id, mode, status, failure_code, fixture FROM verifications WHERE org_id = ${orgId} ORDER BY created_at DESC, reference_id DESC LIMIT 1`);
const verifyVnin = (token: string, vnin: unknown, headers: Record<string, string> = {}, path = '/v1/verify-nin/vnin') =>
  stack.api('POST', path, { token, json: { vnin, reason: 'corporate' }, headers });
const requery = (token: string, reference_id: string) => stack.api('POST', '/v1/verify-nin/requery', { token, json: { reference_id } });

/** What the person's phone does: a fresh token from the simulator (no API key needed). */
async function issue(o: { nin?: string; enterprise_code?: string; issued_at?: string } = {}): Promise<string> {
  const res = await fetch(`${stack.identitySim.url}/sandbox/vnin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ nin: o.nin ?? PERSON_NIN, enterprise_code: o.enterprise_code ?? '000000', ...(o.issued_at ? { issued_at: o.issued_at } : {}) }),
  });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { vnin: string; expires_at: string };
  expect(body.vnin).toMatch(/^[A-Z]{2}\d{12}[A-Z]{2}$/);
  return body.vnin;
}

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack?.close());

describe('fixture vNINs', () => {
  it('When AA000000000001ZZ (in lower case) is verified by an organisation with no units and no subscription, then the full record of 12345678901 comes back and nothing is charged', async () => {
    const org = await stack.createOrg({ units: 0, subscription: false });
    const res = await verifyVnin(org.member.token, 'aa000000000001zz', {}, '/verify-nin/vnin');
    // The first call may have fetched the reasons list; a fixture lookup itself never goes upstream.
    const calls = stack.identitySim.stats().calls;
    expect(res.status).toBe(200);
    const { reference_id, ...rest } = res.body.data;
    expect(reference_id).toMatch(REF);
    const rec = personRecordSchema.parse(rest);
    expect(rec).toMatchObject({ nin: '12345678901', fname: 'Adaeze', lname: 'Okonkwo' });
    const sparse = await verifyVnin(org.member.token, 'AA000000000002ZZ');
    expect(sparse.status).toBe(200);
    expect(sparse.body.data).toMatchObject({ nin: '', fname: 'Ibrahim', lname: 'Musa' });
    expect(stack.identitySim.stats().calls).toBe(calls);
    expect(await wallet(org.orgId)).toEqual({ units: 0, reserved: 0 });
    const lines = await ledger(org.orgId);
    expect(lines.map((l) => [l.kind, l.amount, l.details.mode, l.details.fixture])).toEqual([
      ['fixture_verification', 0, 'vnin', true],
      ['fixture_verification', 0, 'vnin', true],
    ]);
  });

  it('When AA000000000009ZZ or AA000000000008ZZ is verified, then 404 vnin_not_found or vnin_expired, free, and the requery answers the same', async () => {
    const org = await stack.createOrg({ units: 0, subscription: false });
    const missing = await verifyVnin(org.member.token, 'AA000000000009ZZ');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ detail: 'vNIN not found', code: 'vnin_not_found' });
    const row = await lastRow(org.orgId);
    expect(row).toMatchObject({ mode: 'vnin', status: 'not_found', failure_code: 'vnin_not_found', fixture: true });
    expect((await requery(org.member.token, row.reference_id)).body).toEqual({ detail: 'vNIN not found', code: 'vnin_not_found' });

    const expired = await verifyVnin(org.member.token, 'AA000000000008ZZ');
    expect(expired.status).toBe(404);
    expect(expired.body.code).toBe('vnin_expired');
    expect(expired.body.detail).toMatch(/ask the person for a new one/);
    expect(await wallet(org.orgId)).toEqual({ units: 0, reserved: 0 });
  });
});

describe('validation and instructions', () => {
  it('When vnin is not 16 letters and digits, then 400 with the exact detail; missing or not a string, then 422', async () => {
    const org = await stack.createOrg({ units: 1 });
    for (const bad of ['AB01234567891YZ', 'AB012345678910YZA', 'AB0123456789-0YZ', 'AB012345678910Y ', '', 'ÀB012345678910YZ']) {
      const res = await verifyVnin(org.member.token, bad);
      expect(res.status, bad).toBe(400);
      expect(res.body).toEqual({ detail: 'vnin must be 16 letters and digits' });
    }
    expect((await stack.api('POST', '/v1/verify-nin/vnin', { token: org.member.token, json: { reason: 'corporate' } })).status).toBe(422);
    expect((await verifyVnin(org.member.token, 1234567890123456)).status).toBe(422);
    expect((await verifyVnin('not-a-token', 'AA000000000001ZZ')).status).toBe(401);
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 0 });
  });

  it('When a signed-in user asks how to make a vNIN, then our enterprise code, the USSD string and the steps come back', async () => {
    const org = await stack.createOrg();
    const res = await stack.api('GET', '/v1/verify-nin/vnin/instructions', { token: org.member.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ enterprise_code: '000000', ussd: '*346*3*<NIN>*000000#', validity_hours: 72 });
    expect(res.body.steps.length).toBeGreaterThan(1);
    expect((await stack.api('GET', '/verify-nin/vnin/instructions')).status).toBe(401);
  });
});

describe('live vNINs', () => {
  it('When a fresh token is verified, then 200 with the person and 1 unit; used again, then 404 vnin_used, free; requery answers each the same', async () => {
    const org = await stack.createOrg({ units: 2 });
    const token = await issue();
    const first = await verifyVnin(org.member.token, token.toLowerCase());
    expect(first.status).toBe(200);
    expect(first.body.data.nin).toBe(PERSON_NIN);
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 0 });
    const again = await requery(org.member.token, first.body.data.reference_id);
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(first.body.data);

    const second = await verifyVnin(org.member.token, token);
    expect(second.status).toBe(404);
    expect(second.body.code).toBe('vnin_used');
    expect(second.body.detail).toMatch(/ask the person for a new one/);
    const row = await lastRow(org.orgId);
    expect(row).toMatchObject({ status: 'not_found', failure_code: 'vnin_used', fixture: false });
    expect((await requery(org.member.token, row.reference_id)).body).toEqual(second.body);
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 0 });
    expect((await ledger(org.orgId)).filter((l) => l.kind === 'verification')).toHaveLength(1);
  });

  it('When the token is unknown, 72 hours old, or made for another enterprise code, then 404 with its code and nothing is charged', async () => {
    const org = await stack.createOrg({ units: 1 });
    const cases = [
      { vnin: 'ZZ000000000000ZZ', code: 'vnin_not_found' },
      { vnin: await issue({ issued_at: new Date(Date.now() - 72 * 3600 * 1000 - 60_000).toISOString() }), code: 'vnin_expired' },
      { vnin: await issue({ enterprise_code: '1138183' }), code: 'vnin_wrong_enterprise' },
    ];
    for (const c of cases) {
      const res = await verifyVnin(org.member.token, c.vnin);
      expect(res.status, c.code).toBe(404);
      expect(res.body.code).toBe(c.code);
    }
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 0 });
    expect(await ledger(org.orgId)).toEqual([]);
  });

  it('When the same Idempotency-Key is sent again, then the stored answer is replayed without a second lookup', async () => {
    const org = await stack.createOrg({ units: 2 });
    const token = await issue();
    const key = { 'Idempotency-Key': `vnin-${token.slice(2, 8)}` };
    const first = await verifyVnin(org.member.token, token, key);
    expect(first.status).toBe(200);
    const calls = stack.identitySim.stats().calls;
    const replay = await verifyVnin(org.member.token, token, key);
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(stack.identitySim.stats().calls).toBe(calls);
    // Another token under the same key is another request.
    expect((await verifyVnin(org.member.token, 'ZZ000000000000ZZ', key)).status).toBe(409);
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 0 });
  });

  it('When the organisation cannot pay or has no subscription, then 402 or 403 before the authority is asked', async () => {
    const poor = await stack.createOrg({ units: 0 });
    const calls = stack.identitySim.stats().calls;
    expect((await verifyVnin(poor.member.token, 'ZZ000000000000ZZ')).status).toBe(402);
    const unsubscribed = await stack.createOrg({ units: 1, subscription: false });
    expect((await verifyVnin(unsubscribed.member.token, 'ZZ000000000000ZZ')).status).toBe(403);
    expect(stack.identitySim.stats().calls).toBe(calls);
  });
});

describe('one attempt at the authority', () => {
  it('When the authority answers 503 to a vNIN lookup, then it is not retried: 502 upstream_unavailable, one call, unit released, and the key replays it', async () => {
    const org = await stack.createOrg({ units: 1 });
    const token = await issue({ nin: '50010000001' });
    // The reasons list is fetched from the authority once per cache period: fetched now, it is not
    // counted below as a second call of the lookup.
    expect((await stack.api('GET', '/v1/nimc-reasons', { token: org.member.token })).status).toBe(200);
    stack.identitySim.resetStats();
    const key = { 'Idempotency-Key': `vnin-fail-${token.slice(2, 8)}` };
    const res = await verifyVnin(org.member.token, token, key);
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ code: 'upstream_unavailable', reference_id: expect.stringMatching(REF) });
    expect(res.body.detail).toMatch(/ask the person for a new one/);
    expect(stack.identitySim.stats().calls).toBe(1);
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 0 });
    const replay = await verifyVnin(org.member.token, token, key);
    expect(replay.status).toBe(502);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(stack.identitySim.stats().calls).toBe(1);
    // A NIN lookup of the same kind of fault is retried: the rule is the token's.
    stack.identitySim.resetStats();
    expect((await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '50010000001', reason: 'corporate' } })).status).toBe(502);
    expect(stack.identitySim.stats().calls).toBe(stack.config.IDENTITY_MAX_ATTEMPTS);
  });

  it('When the authority does not answer in time after the call went out, then 502 upstream_unavailable after one call, and the unit is released', async () => {
    const org = await stack.createOrg({ units: 1 });
    const token = await issue({ nin: '50020000001' });
    expect((await stack.api('GET', '/v1/nimc-reasons', { token: org.member.token })).status).toBe(200);
    stack.identitySim.resetStats();
    const res = await verifyVnin(org.member.token, token);
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('upstream_unavailable');
    expect(stack.identitySim.stats().calls).toBe(1);
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 0 });
    expect(await lastRow(org.orgId)).toMatchObject({ status: 'failed', failure_code: 'upstream_unavailable' });
  });
});
