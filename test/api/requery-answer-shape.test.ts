import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// A requery answers one shape per outcome, whichever way the verification was made.

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ env: { IDENTITY_MAX_ATTEMPTS: '1' } });
});
afterAll(async () => stack?.close());

const consent = () => ({ obtained_at: new Date(Date.now() - 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z'), channel: 'web', notice_version: 'privacy-2026-03' });
const post = (org: OrgFixture, path: string, json: unknown, async = false) =>
  stack.api('POST', path, { token: org.member.token, json, headers: async ? { Prefer: 'respond-async' } : {} });
const requery = (org: OrgFixture, reference_id: string) => stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id } });

describe('one requery answer per outcome', () => {
  it('When the same fixture NIN and the same match are verified synchronously and asynchronously, then both requeries answer {status, message, data, verdict, verdict_reasons, consent} with the same data and verdict', async () => {
    const org = await stack.createOrg({ units: 0 });
    const c = consent();
    for (const [path, body] of [
      ['/v1/verify-nin', { nin: '12345678901', reason: 'corporate', consent: c }],
      ['/v1/verify-nin/match', { nin: '12345678901', reason: 'corporate', fname: 'adaeze', lname: 'OKONKWO', consent: c }],
    ] as const) {
      const sync = await post(org, path, body);
      expect(sync.status, path).toBe(200);
      const accepted = await post(org, path, body, true);
      expect(accepted.status, path).toBe(202);
      const bySync = await requery(org, sync.body.data.reference_id);
      const byAsync = await requery(org, accepted.body.reference_id);
      for (const [r, ref] of [
        [bySync, sync.body.data.reference_id],
        [byAsync, accepted.body.reference_id],
      ] as const) {
        expect(r.status, path).toBe(200);
        expect(r.body, path).toEqual({ status: 'success', message: 'Record retrieved successfully', data: { ...sync.body.data, reference_id: ref }, verdict: 'verified', verdict_reasons: [], consent: { ...c, obtained_at: expect.any(String) } });
        expect(sync.body, path).toMatchObject({ verdict: 'verified', verdict_reasons: [] });
      }
    }
  });

  it('When an asynchronous verification is still waiting, then the requery answers 202 {status, message, reference_id, consent} with no verdict yet (null, no reasons)', async () => {
    const org = await stack.createOrg({ units: 2 });
    // 5001...: the simulated authority answers 503 every time, so the lookup keeps waiting.
    const accepted = await post(org, '/v1/verify-nin', { nin: '50019999001', reason: 'corporate' }, true);
    expect(accepted.status).toBe(202);
    const r = await requery(org, accepted.body.reference_id);
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ status: 'pending', message: 'Verification still in progress', reference_id: accepted.body.reference_id, verdict: null, verdict_reasons: [], consent: null });
  });

  it('When a verification was not found, synchronously or not, then both requeries answer the same 404', async () => {
    const org = await stack.createOrg({ units: 0 });
    const sync = await post(org, '/v1/verify-nin', { nin: '99999999999', reason: 'corporate' });
    expect(sync.status).toBe(404);
    const accepted = await post(org, '/v1/verify-nin', { nin: '99999999999', reason: 'corporate' }, true);
    const r = await requery(org, accepted.body.reference_id);
    expect([r.status, r.body]).toEqual([404, sync.body]);
  });
});
