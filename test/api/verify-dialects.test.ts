import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { personRecordSchema } from '../../src/modules/verification/person.ts';
import { startStack, type Stack } from '../setup/harness.ts';

/**
 * Live verifications through the Prembly and Dojah adapters: API, queue and worker as in
 * production, over HTTP to the identity simulator speaking that provider's dialect. The outcomes
 * are the ones the API reference (src/modules/verification/verification.guide.md) documents for every authority (found, NIN not found, unavailable).
 */
const REF = /^REF-[A-Z0-9]{12}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const walletRow = z.object({ units: z.coerce.number(), reserved: z.coerce.number() });
const FOUND = '31415926535';
const MISSING = '01234567890';

describe.each(['prembly', 'dojah'] as const)('live verification through the %s adapter', (dialect) => {
  let stack: Stack;
  const wallet = (orgId: number) => stack.db.one(sql.type(walletRow)`SELECT units, reserved FROM wallets WHERE org_id = ${orgId}`);
  const verify = (token: string, nin: string) => stack.api('POST', '/v1/verify-nin', { token, json: { nin, reason: 'corporate' } });

  beforeAll(async () => {
    stack = await startStack({ dialect, captureLogs: true });
  });
  afterAll(async () => stack?.close());

  it('When the NIN is found, then 200 with the normalised record, in this dialect\'s shape, and one unit debited', async () => {
    const org = await stack.createOrg({ units: 2 });
    const res = await verify(org.member.token, FOUND);
    expect(res.status).toBe(200);
    const { reference_id, ...rest } = res.body.data as Record<string, unknown>;
    expect(reference_id).toMatch(REF);
    const rec = personRecordSchema.parse(rest);
    expect(rec.nin).toBe(FOUND);
    expect(rec.fname).not.toBe('');
    expect(rec.dob).toMatch(/^\d{2}-\d{2}-\d{4}$/);
    if (dialect === 'prembly') {
      // Prembly's verification reference becomes the upstream transaction id; its record has the address.
      expect(rec.transaction_id).toMatch(UUID);
      expect(rec.residenceAdress).not.toBe('');
    } else {
      // Dojah's "Lookup NIN" entity carries no address, and the NIN comes from the query.
      expect(rec.residenceAdress).toBe('');
    }
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 0 });
  });

  it('When the authority has no record, then 404 NIN not found and nothing is charged', async () => {
    const org = await stack.createOrg({ units: 2 });
    const res = await verify(org.member.token, MISSING);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'NIN not found' });
    expect(await wallet(org.orgId)).toEqual({ units: 2, reserved: 0 });
  });

  it('When the authority is down (an outage of 503s), then 502 upstream_unavailable and nothing is charged; found again after', async () => {
    const org = await stack.createOrg({ units: 2 });
    stack.identitySim.outage({ mode: '503', forMs: 60_000 });
    try {
      const res = await verify(org.member.token, FOUND);
      expect(res.status).toBe(502);
      expect(res.body).toEqual({ detail: 'Identity authority unavailable, nothing was charged', reference_id: expect.stringMatching(REF), code: 'upstream_unavailable' });
      expect(await wallet(org.orgId)).toEqual({ units: 2, reserved: 0 });
    } finally {
      stack.identitySim.outage({ mode: 'none' });
    }
    expect((await verify(org.member.token, FOUND)).status).toBe(200);
  });

  it('When verifications ran, then no NIN or name reached a log line', async () => {
    const res = await verify((await stack.createOrg({ units: 1 })).member.token, FOUND);
    expect(res.status).toBe(200);
    const text = stack.logs.join('\n');
    expect(text.length).toBeGreaterThan(0);
    for (const nin of [FOUND, MISSING]) expect(text).not.toContain(nin);
    expect(text).not.toContain(String(res.body.data.fname));
    expect(text).not.toContain(String(res.body.data.lname));
  });
});
