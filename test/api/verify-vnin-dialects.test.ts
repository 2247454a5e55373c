import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { personRecordSchema } from '../../src/modules/verification/person.ts';
import { startStack, type Stack } from '../setup/harness.ts';

/**
 * vNIN verifications end to end through each adapter (sandbox, Prembly, Dojah): the simulator
 * answers in that provider's dialect, and each of the four refusals, worded the dialect's way inside
 * its not-found answer, comes back as the same 404 code.
 */
const REF = /^REF-[A-Z0-9]{12}$/;
const PERSON_NIN = '27182818284';
const walletRow = z.object({ units: z.coerce.number(), reserved: z.coerce.number() });

describe.each(['sandbox', 'prembly', 'dojah'] as const)('vNIN through the %s adapter', (dialect) => {
  let stack: Stack;
  const wallet = (orgId: number) => stack.db.one(sql.type(walletRow)`SELECT units, reserved FROM wallets WHERE org_id = ${orgId}`);
  const verify = (token: string, vnin: string) => stack.api('POST', '/v1/verify-nin/vnin', { token, json: { vnin, reason: 'corporate' } });
  const issue = async (o: { enterprise_code?: string; issued_at?: string } = {}) => {
    const res = await fetch(`${stack.identitySim.url}/sandbox/vnin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ nin: PERSON_NIN, enterprise_code: o.enterprise_code ?? '000000', ...(o.issued_at ? { issued_at: o.issued_at } : {}) }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { vnin: string }).vnin;
  };

  beforeAll(async () => {
    stack = await startStack({ dialect });
  });
  afterAll(async () => stack?.close());

  it('When a fresh token is verified, then 200 with the person (the NIN only where the provider gives it) and one unit', async () => {
    const org = await stack.createOrg({ units: 2 });
    const token = await issue();
    const res = await verify(org.member.token, token);
    expect(res.status).toBe(200);
    const { reference_id, ...rest } = res.body.data as Record<string, unknown>;
    expect(reference_id).toMatch(REF);
    const rec = personRecordSchema.parse(rest);
    expect(rec.fname).not.toBe('');
    expect(rec.dob).toMatch(/^\d{2}-\d{2}-\d{4}$/);
    // Dojah's "Virtual NIN Lookup" entity carries no NIN (and echoes the token, which is dropped).
    expect(rec.nin).toBe(dialect === 'dojah' ? '' : PERSON_NIN);
    expect(JSON.stringify(res.body)).not.toContain(token);
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 0 });
  });

  it('When the token is used, unknown, expired or made for another enterprise, then 404 with the matching code, free', async () => {
    const org = await stack.createOrg({ units: 2 });
    const used = await issue();
    expect((await verify(org.member.token, used)).status).toBe(200);
    const cases = [
      { vnin: used, code: 'vnin_used' },
      { vnin: 'QQ000000000000QQ', code: 'vnin_not_found' },
      { vnin: await issue({ issued_at: new Date(Date.now() - 80 * 3600 * 1000).toISOString() }), code: 'vnin_expired' },
      { vnin: await issue({ enterprise_code: '696739' }), code: 'vnin_wrong_enterprise' },
    ];
    for (const c of cases) {
      const res = await verify(org.member.token, c.vnin);
      expect(res.status, c.code).toBe(404);
      expect(res.body.code, c.code).toBe(c.code);
      if (c.code === 'vnin_not_found') expect(res.body.detail).toBe('vNIN not found');
    }
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 0 });
  });
});
