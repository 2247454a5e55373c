import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// Every history list answers CSV to `Accept: text/csv`, as GET /transactions does, and 406 to an
// Accept that neither JSON nor CSV satisfies.

let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack();
  org = await stack.createOrg({ units: 5 });
});
afterAll(async () => stack?.close());

const csv = (path: string, token: string) => stack.api('GET', path, { token, headers: { accept: 'text/csv' } });
const lines = (text: string) => text.split('\r\n').filter(Boolean);

describe('CSV on every history list', () => {
  it('When GET /verifications is asked for text/csv, then the filtered range as CSV, newest first, limit and cursor not applying', async () => {
    const consent = { obtained_at: new Date(Date.now() - 60_000).toISOString(), channel: 'mobile', notice_version: 'privacy-2026-03' };
    const first = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '23456789012', reason: 'corporate', consent } });
    const second = await stack.api('POST', '/v1/verify-nin', { token: org.admin.token, json: { nin: '12345678901', reason: 'corporate' } });
    expect([first.status, second.status]).toEqual([200, 200]);
    const r = await csv('/v1/verifications?limit=1&status=found', org.member.token);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    expect(r.headers.get('content-disposition')).toBe(`attachment; filename="verifications-${org.orgId}.csv"`);
    expect(r.headers.get('cache-control')).toBe('no-store');
    const json = await stack.api('GET', '/v1/verifications', { token: org.member.token });
    const created = json.body.data.map((v: { created_at: string }) => v.created_at);
    expect(lines(r.text)).toEqual([
      'reference_id,mode,kind,batch_id,reason,status,charged,fixture,username,api_client_id,api_client_name,consent_obtained_at,consent_channel,consent_notice_version,created_at',
      `${second.body.data.reference_id},sync,nin,,corporate,found,false,true,${org.admin.username},,,,,,${created[0]}`,
      `${first.body.data.reference_id},sync,nin,,corporate,found,true,false,${org.member.username},,,${json.body.data[1].consent.obtained_at},mobile,privacy-2026-03,${created[1]}`,
    ]);
  });

  it('When GET /topups is asked for text/csv, then the top-ups as CSV with the JSON fields as columns', async () => {
    const init = await stack.api('POST', '/v1/topup/initialize', { token: org.admin.token, form: { units: 100 } });
    expect(init.status).toBe(200);
    const r = await csv('/v1/topups', org.admin.token);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    expect(r.headers.get('content-disposition')).toBe(`attachment; filename="topups-${org.orgId}.csv"`);
    const t = (await stack.api('GET', '/v1/topups', { token: org.admin.token })).body.data[0];
    expect(lines(r.text)).toEqual([
      'reference,status,units,bonus_units,base_amount,vat_amount,service_charge,total_amount,paid_amount,created_at,credited_at,invoice_number,paid_at',
      `${init.body.reference},pending,100,0,${t.base_amount},${t.vat_amount},${t.service_charge},${t.total_amount},,${t.created_at},,,`,
    ]);
    // Team members: the same 403 as the JSON list.
    expect((await csv('/v1/topups', org.member.token)).status).toBe(403);
  });

  it('When Accept allows neither JSON nor CSV, then 406 on every list; */* and no Accept stay JSON', async () => {
    for (const path of ['/v1/verifications', '/v1/topups', '/v1/transactions']) {
      const r = await stack.api('GET', path, { token: org.admin.token, headers: { accept: 'application/xml' } });
      expect(r.status, path).toBe(406);
      expect(r.body).toEqual({ detail: 'Accept must allow application/json or text/csv' });
      for (const accept of ['*/*', 'application/json', 'text/*;q=0.1, application/json']) {
        const ok = await stack.api('GET', path, { token: org.admin.token, headers: { accept } });
        expect(ok.status, `${path} ${accept}`).toBe(200);
        expect(ok.headers.get('content-type')).toBe('application/json; charset=utf-8');
      }
    }
  });
});
