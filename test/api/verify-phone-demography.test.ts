import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { personRecordSchema } from '../../src/modules/verification/person.ts';
import { startStack, type Stack } from '../setup/harness.ts';

const REF = /^REF-[A-Z0-9]{12}$/;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack?.close());

const wallet = (orgId: number) =>
  stack.db.one(sql.type(z.object({ units: z.coerce.number(), reserved: z.coerce.number() }))`SELECT units, reserved FROM wallets WHERE org_id = ${orgId}`);
const debits = (orgId: number) =>
  stack.db.any(sql.type(z.object({ reference: z.string(), details: z.record(z.string(), z.unknown()) }))`
    SELECT reference, details FROM wallet_transactions WHERE org_id = ${orgId} AND kind = 'verification' ORDER BY id`);

function record(data: Record<string, unknown>) {
  const { reference_id, ...rest } = data;
  expect(reference_id).toMatch(REF);
  return personRecordSchema.parse(rest);
}

describe('POST /verify-nin/phone', () => {
  const phone = (token: string, body: unknown, path = '/v1/verify-nin/phone') => stack.api('POST', path, { token, json: body });

  it('When a known phone is verified, then the record (with its NIN) comes back and one unit is debited', async () => {
    const org = await stack.createOrg({ units: 2 });
    const res = await phone(org.member.token, { phone_no: '08031234567', reason: 'telecommunicationSimReg' });
    expect(res.status).toBe(200);
    const rec = record(res.body.data);
    expect(rec.phone).toBe('08031234567');
    expect(rec.nin).toMatch(/^2\d{10}$/);
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 0 });
    expect(await debits(org.orgId)).toEqual([{ reference: res.body.data.reference_id, details: expect.objectContaining({ mode: 'phone', reason: 'telecommunicationSimReg' }) }]);
  });

  it('When the phone is unknown, then 404 Record not found and nothing is charged', async () => {
    const org = await stack.createOrg({ units: 1 });
    const res = await phone(org.member.token, { phone_no: '07234567890', reason: 'corporate' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Record not found' });
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 0 });
  });

  it('When the phone is not 11 digits starting with 0, then 400; when it is missing, then 422', async () => {
    const org = await stack.createOrg({ units: 1 });
    for (const bad of ['8031234567', '+2348031234567', '0803123456', '080312345678', '00031234567']) {
      const res = await phone(org.member.token, { phone_no: bad, reason: 'corporate' });
      expect(res.status, bad).toBe(400);
      expect(res.body.detail).toMatch(/^phone_no: /);
    }
    const missing = await phone(org.member.token, { reason: 'corporate' });
    expect(missing.status).toBe(422);
    const wrongType = await phone(org.member.token, { phone_no: 8031234567, reason: 'corporate' });
    expect(wrongType.status).toBe(422);
  });

  it('When the reason is not a key of the reasons list, then 400', async () => {
    const org = await stack.createOrg({ units: 1 });
    const res = await phone(org.member.token, { phone_no: '08031234567', reason: 'SIM registration' });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/Invalid reason/);
  });

  it('When the unversioned path is used, then it answers the same way', async () => {
    const org = await stack.createOrg({ units: 1 });
    const res = await phone(org.member.token, { phone_no: '08031234567', reason: 'corporate' }, '/verify-nin/phone');
    expect(res.status).toBe(200);
  });
});

describe('POST /verify-nin/demography', () => {
  const demo = (token: string, body: Record<string, unknown>) =>
    stack.api('POST', '/v1/verify-nin/demography', { token, json: { first_name: 'Ada', last_name: 'Okafor', date_of_birth: '14-03-1991', gender: 'F', ...body } });

  it('When a person is found, then the record echoes the query, the reason defaults to nyscCheck and one unit is debited', async () => {
    const org = await stack.createOrg({ units: 3 });
    const res = await demo(org.member.token, {});
    expect(res.status).toBe(200);
    const rec = record(res.body.data);
    expect(rec).toMatchObject({ fname: 'Ada', lname: 'Okafor', dob: '14-03-1991', gender: 'F' });
    expect(rec.nin).toMatch(/^\d{11}$/);
    const lower = await demo(org.member.token, { gender: 'm', reason: 'nyscCheck' });
    expect(lower.status).toBe(200);
    expect(lower.body.data.gender).toBe('M');
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 0 });
    expect((await debits(org.orgId)).map((d) => d.details.reason)).toEqual(['nyscCheck', 'nyscCheck']);
  });

  it('When nobody matches, then 404 Record not found and nothing is charged', async () => {
    const org = await stack.createOrg({ units: 1 });
    const res = await demo(org.member.token, { last_name: 'Zubair' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Record not found' });
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 0 });
  });

  it('When the reason is anything but nyscCheck, then 400', async () => {
    const org = await stack.createOrg({ units: 1 });
    for (const reason of ['corporate', 'telecommunicationSimReg', 'nysccheck']) {
      const res = await demo(org.member.token, { reason });
      expect(res.status, reason).toBe(400);
      expect(res.body.detail).toMatch(/^reason: .*nyscCheck/);
    }
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 0 });
  });

  it('When the date of birth is malformed, impossible or in the future, or the gender unknown, then 400', async () => {
    const org = await stack.createOrg({ units: 1 });
    const future = new Date(Date.now() + 86_400_000 * 2);
    const dd = String(future.getUTCDate()).padStart(2, '0');
    const mm = String(future.getUTCMonth() + 1).padStart(2, '0');
    const cases: Record<string, unknown>[] = [
      { date_of_birth: '1991-03-14' },
      { date_of_birth: '31-02-1990' },
      { date_of_birth: '29-02-2023' },
      { date_of_birth: `${dd}-${mm}-${future.getUTCFullYear()}` },
      { gender: 'x' },
      { gender: 'male' },
      { first_name: '   ' },
    ];
    for (const c of cases) {
      const res = await demo(org.member.token, c);
      expect(res.status, JSON.stringify(c)).toBe(400);
    }
    const leap = await demo(org.member.token, { date_of_birth: '29-02-2000' });
    expect(leap.status).toBe(200);
  });

  it('When a field is missing or of the wrong type, then 422 with the field errors', async () => {
    const org = await stack.createOrg({ units: 1 });
    const res = await stack.api('POST', '/v1/verify-nin/demography', { token: org.member.token, json: { last_name: 'Okafor', date_of_birth: '14-03-1991', gender: 'f' } });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { loc: string[] }) => e.loc.join('.'))).toContain('first_name');
    const typed = await demo(org.member.token, { gender: 1 });
    expect(typed.status).toBe(422);
  });

  it('When the subscription is inactive, then 403 (no fixture bypass outside /verify-nin)', async () => {
    const org = await stack.createOrg({ units: 1, subscription: false });
    const res = await demo(org.member.token, {});
    expect(res.status).toBe(403);
  });

  it('When a demography result is requeried, then the same record comes back free of charge', async () => {
    const org = await stack.createOrg({ units: 1 });
    const res = await demo(org.member.token, {});
    expect(res.status).toBe(200);
    const again = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: res.body.data.reference_id } });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(res.body.data);
    expect(await wallet(org.orgId)).toEqual({ units: 0, reserved: 0 });
  });
});
