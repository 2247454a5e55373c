import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startStack, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

// A vNIN asked asynchronously keeps the vNIN rules: the token stays out of PostgreSQL, the lookup is
// made once when its call may have reached the authority, and the requery gives the synchronous answer.

let stack: Stack;
const walletRow = z.object({ units: z.coerce.number(), reserved: z.coerce.number() });
const wallet = (orgId: number) => stack.db.one(sql.type(walletRow)`SELECT units, reserved FROM wallets WHERE org_id = ${orgId}`);

async function issue(nin: string): Promise<string> {
  const r = await fetch(`${stack.identitySim.url}/sandbox/vnin`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ nin, enterprise_code: stack.config.nimcEnterpriseCode }) });
  expect(r.status).toBe(201);
  return ((await r.json()) as { vnin: string }).vnin;
}

beforeAll(async () => {
  stack = await startStack({ env: { IDENTITY_MAX_ATTEMPTS: '1' } });
});
afterAll(async () => stack?.close());

describe('asynchronous vNIN', () => {
  it('When a live vNIN is asked with Prefer: respond-async, then 202, and the requery gives the record once found, charged once', async () => {
    const org = await stack.createOrg({ units: 2 });
    const vnin = await issue('31415926535');
    const accepted = await stack.api('POST', '/v1/verify-nin/vnin', { token: org.member.token, json: { vnin, reason: 'corporate' }, headers: { Prefer: 'respond-async' } });
    expect(accepted.status).toBe(202);
    const ref = accepted.body.reference_id as string;
    let final: { status: number; body: any } = { status: 0, body: null };
    await waitFor(async () => (final = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } })).status !== 202, { what: 'the lookup to end', timeoutMs: 20_000 });
    expect(final.status).toBe(200);
    expect(final.body.data.reference_id).toBe(ref);
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 0 });
    const dump = await stack.db.any(sql.unsafe`SELECT encode(query_enc, 'escape') AS q FROM verifications WHERE reference_id = ${ref}`);
    expect(JSON.stringify(dump)).not.toContain(vnin);
  });

  it('When the authority fails after the call went out, then the asynchronous vNIN ends failed at once (one attempt), its unit released', async () => {
    const org = await stack.createOrg({ units: 2 });
    const vnin = await issue('50010000001');
    expect((await stack.api('GET', '/v1/nimc-reasons', { token: org.member.token })).status).toBe(200);
    const calls = stack.identitySim.stats().calls;
    const accepted = await stack.api('POST', '/v1/verify-nin/vnin', { token: org.member.token, json: { vnin, reason: 'corporate' }, headers: { Prefer: 'respond-async' } });
    expect(accepted.status).toBe(202);
    const ref = accepted.body.reference_id as string;
    let final: { status: number; body: any } = { status: 0, body: null };
    await waitFor(async () => (final = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } })).status !== 202, { what: 'the lookup to end', timeoutMs: 20_000 });
    expect(final.status).toBe(502);
    expect(final.body.code).toBe('upstream_unavailable');
    expect(stack.identitySim.stats().calls - calls).toBe(1);
    expect(await wallet(org.orgId)).toEqual({ units: 2, reserved: 0 });
  });
});
