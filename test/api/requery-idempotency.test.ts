import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { QUEUES } from '../../src/jobs/catalog.ts';
import { startStack, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

const REF = /^REF-[A-Z0-9]{12}$/;

let stack: Stack;
// The upstream answers after 1.2 s but callers wait only 400 ms: every live call ends in 504.
let slow: Stack;
beforeAll(async () => {
  [stack, slow] = await Promise.all([startStack(), startStack({ simLatencyMs: 1200, env: { VERIFY_WAIT_MS: '400' } })]);
});
afterAll(async () => {
  await Promise.all([stack?.close(), slow?.close()]);
});

const walletOf = (s: Stack, orgId: number) =>
  s.db.one(sql.type(z.object({ units: z.coerce.number(), reserved: z.coerce.number() }))`SELECT units, reserved FROM wallets WHERE org_id = ${orgId}`);
const debitsOf = (s: Stack, orgId: number) =>
  s.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM wallet_transactions WHERE org_id = ${orgId} AND kind = 'verification'`);
const linkedReference = (s: Stack, orgId: number, key: string) =>
  s.db.maybeOneFirst(sql.type(z.object({ reference_id: z.string().nullable() }))`SELECT reference_id FROM idempotency_keys WHERE org_id = ${orgId} AND key = ${key}`);
const requeryOn = (s: Stack, token: string, reference_id: unknown) => s.api('POST', '/v1/verify-nin/requery', { token, json: { reference_id } });
const verifyOn = (s: Stack, token: string, json: unknown, key?: string, path = '/v1/verify-nin') =>
  s.api('POST', path, { token, json, headers: key === undefined ? {} : { 'Idempotency-Key': key } });

async function settled(s: Stack, token: string, ref: string, timeoutMs = 10_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await requeryOn(s, token, ref);
    if (r.status !== 202 || Date.now() > until) return r;
    await sleep(150);
  }
}

describe('POST /verify-nin/requery', () => {
  it('When a found verification is requeried, then the same record comes back, free, as often as asked', async () => {
    const org = await stack.createOrg({ units: 1 });
    const first = await verifyOn(stack, org.member.token, { nin: '31415926535', reason: 'corporate' });
    expect(first.status).toBe(200);
    const ref = first.body.data.reference_id;
    for (let i = 0; i < 3; i++) {
      const again = await requeryOn(stack, org.admin.token, ref);
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ status: 'success', message: 'Record retrieved successfully', data: first.body.data, verdict: 'verified', verdict_reasons: [], consent: null });
    }
    expect(await walletOf(stack, org.orgId)).toEqual({ units: 0, reserved: 0 });
    expect(await debitsOf(stack, org.orgId)).toBe(1);
  });

  it("When the reference is unknown or another organisation's, then the same 404", async () => {
    const mine = await stack.createOrg({ units: 1 });
    const other = await stack.createOrg({ units: 0 });
    const res = await verifyOn(stack, mine.member.token, { nin: '12345678901', reason: 'corporate' });
    const unknown = await requeryOn(stack, other.member.token, 'REF-AAAAAAAAAAAA');
    const foreign = await requeryOn(stack, other.member.token, res.body.data.reference_id);
    expect(unknown.status).toBe(404);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(unknown.body);
    const mineAgain = await requeryOn(stack, mine.member.token, res.body.data.reference_id);
    expect(mineAgain.status).toBe(200);
  });

  it('When the reference is malformed or missing, then 400 or 422', async () => {
    const org = await stack.createOrg();
    expect((await requeryOn(stack, org.member.token, 'REF-123')).status).toBe(400);
    expect((await requeryOn(stack, org.member.token, undefined)).status).toBe(422);
  });

  it('When a not-found verification is requeried, then 404 NIN not found', async () => {
    const org = await stack.createOrg({ units: 1 });
    await verifyOn(stack, org.member.token, { nin: '02345678901', reason: 'corporate' });
    const ref = await stack.db.oneFirst(sql.type(z.object({ reference_id: z.string() }))`SELECT reference_id FROM verifications WHERE org_id = ${org.orgId}`);
    const res = await requeryOn(stack, org.member.token, ref);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'NIN not found' });
  });

  it('When the wait runs out before the upstream answers, then 504 with the reference_id, 202 while pending, and the requery finds the result', async () => {
    const org = await slow.createOrg({ units: 2 });
    const res = await verifyOn(slow, org.member.token, { nin: '31415926535', reason: 'corporate' });
    expect(res.status).toBe(504);
    expect(res.body).toEqual({ detail: 'Verification still in progress; requery with the reference_id', reference_id: expect.stringMatching(REF) });
    const pending = await requeryOn(slow, org.member.token, res.body.reference_id);
    expect(pending.status).toBe(202);
    expect(pending.body).toEqual({ status: 'pending', message: 'Verification still in progress', reference_id: res.body.reference_id, verdict: null, verdict_reasons: [], consent: null });
    const done = await settled(slow, org.member.token, res.body.reference_id);
    expect(done.status).toBe(200);
    expect(done.body.data).toMatchObject({ nin: '31415926535', reference_id: res.body.reference_id });
    expect(await walletOf(slow, org.orgId)).toEqual({ units: 1, reserved: 0 });
    expect(await debitsOf(slow, org.orgId)).toBe(1);
  });

  it('When the upstream never answers (5002) and the wait runs out, then 504, and the requery later reports the failure with nothing charged', async () => {
    const org = await slow.createOrg({ units: 1 });
    const res = await verifyOn(slow, org.member.token, { nin: '50029876543', reason: 'corporate' });
    expect(res.status).toBe(504);
    const done = await settled(slow, org.member.token, res.body.reference_id, 20_000);
    expect(done.status).toBe(502);
    expect(done.body).toEqual({ detail: 'Identity authority unavailable, nothing was charged', reference_id: res.body.reference_id, code: 'upstream_timeout' });
    expect(await walletOf(slow, org.orgId)).toEqual({ units: 1, reserved: 0 });
    expect(await debitsOf(slow, org.orgId)).toBe(0);
  }, 30_000);
});

describe('Idempotency-Key', () => {
  it('When the same key and body are sent twice, then the first answer is replayed without a second debit', async () => {
    const org = await stack.createOrg({ units: 5 });
    const body = { nin: '27182818284', reason: 'corporate' };
    const first = await verifyOn(stack, org.member.token, body, 'order-1');
    const second = await verifyOn(stack, org.admin.token, body, 'order-1');
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(await debitsOf(stack, org.orgId)).toBe(1);
    // The stored answer holds personal data: it is kept encrypted.
    const stored = await stack.db.one(sql.type(z.object({ response_enc: z.instanceof(Buffer), status_code: z.number(), reference_id: z.string() }))`
      SELECT response_enc, status_code, reference_id FROM idempotency_keys WHERE org_id = ${org.orgId} AND key = 'order-1'`);
    expect(stored).toMatchObject({ status_code: 200, reference_id: first.body.data.reference_id });
    expect(stored.response_enc.includes('27182818284')).toBe(false);
    // Another organisation may use the same key for its own request.
    const other = await stack.createOrg({ units: 1 });
    const theirs = await verifyOn(stack, other.member.token, body, 'order-1');
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
  });

  it('When the same key comes with a different body or endpoint, then 409', async () => {
    const org = await stack.createOrg({ units: 5 });
    await verifyOn(stack, org.member.token, { nin: '27182818284', reason: 'corporate' }, 'k-2');
    const changed = await verifyOn(stack, org.member.token, { nin: '27182818285', reason: 'corporate' }, 'k-2');
    expect(changed.status).toBe(409);
    expect(changed.body).toEqual({ detail: 'Idempotency-Key was used with a different request' });
    const elsewhere = await verifyOn(stack, org.member.token, { phone_no: '08031234567', reason: 'corporate' }, 'k-2', '/v1/verify-nin/phone');
    expect(elsewhere.status).toBe(409);
    expect(await debitsOf(stack, org.orgId)).toBe(1);
  });

  it('When the same key arrives several times at once, then only one verification is charged', async () => {
    const org = await stack.createOrg({ units: 5 });
    const body = { nin: '16180339887', reason: 'corporate' };
    const results = await Promise.all(Array.from({ length: 6 }, () => verifyOn(stack, org.member.token, body, 'burst')));
    const ok = results.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const r of results) expect([200, 409]).toContain(r.status);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.detail).toBe('A request with this Idempotency-Key is in progress');
    expect(new Set(ok.map((r) => r.body.data.reference_id)).size).toBe(1);
    expect(await debitsOf(stack, org.orgId)).toBe(1);
  });

  it('When a key is reused while its request is still in flight, then 409 in progress; once settled, the answer is replayed', async () => {
    const org = await stack.createOrg({ units: 3 });
    const body = { nin: '14142135623', reason: 'corporate' };
    // With the lookup queue paused the first request's job cannot run: the request stays in flight
    // (it waits up to VERIFY_WAIT_MS, 8 s) until the queue is resumed.
    const lookups = stack.workers!.deps.producer.queue(QUEUES.lookups);
    await lookups.pause();
    let first: Awaited<ReturnType<typeof verifyOn>> | undefined;
    try {
      const firstP = verifyOn(stack, org.member.token, body, 'slow-1').then((r) => (first = r));
      // The first request has claimed the key and started its verification.
      const referenceId = await waitFor(() => linkedReference(stack, org.orgId, 'slow-1'), { what: 'the key linked to its verification' });
      const during = await verifyOn(stack, org.member.token, body, 'slow-1');
      expect(first).toBeUndefined();
      expect(during.status).toBe(409);
      expect(during.body).toEqual({ detail: 'A request with this Idempotency-Key is in progress', reference_id: referenceId });
      await lookups.resume();
      await firstP;
      expect(first!.status).toBe(200);
      expect(first!.body.data.reference_id).toBe(referenceId);
    } finally {
      await lookups.resume();
    }
    const replay = await verifyOn(stack, org.member.token, body, 'slow-1');
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first!.body);
    expect(await debitsOf(stack, org.orgId)).toBe(1);
    expect(await walletOf(stack, org.orgId)).toEqual({ units: 2, reserved: 0 });
  });

  it('When the wait ran out (504), then a retry with the key gets 409 with the same reference_id, and the settled answer is replayed', async () => {
    const org = await slow.createOrg({ units: 3 });
    const body = { nin: '14142135624', reason: 'corporate' };
    // Paused, the lookup cannot finish before the retry: the verification is still pending then.
    const lookups = slow.workers!.deps.producer.queue(QUEUES.lookups);
    await lookups.pause();
    let first;
    try {
      first = await verifyOn(slow, org.member.token, body, 'slow-2');
      // The wait ran out: the key stays tied to the verification, so a retry cannot charge twice.
      expect(first.status).toBe(504);
      const retry = await verifyOn(slow, org.member.token, body, 'slow-2');
      expect(retry.status).toBe(409);
      expect(retry.body).toEqual({ detail: 'A request with this Idempotency-Key is in progress', reference_id: first.body.reference_id });
    } finally {
      await lookups.resume();
    }
    const done = await settled(slow, org.member.token, first.body.reference_id);
    expect(done.status).toBe(200);
    const replay = await verifyOn(slow, org.member.token, body, 'slow-2');
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data.reference_id).toBe(first.body.reference_id);
    expect(await debitsOf(slow, org.orgId)).toBe(1);
    expect(await walletOf(slow, org.orgId)).toEqual({ units: 2, reserved: 0 });
  });

  it('When the first answer was 402 or 404, then it is replayed; a 502 frees the key for a retry', async () => {
    const org = await stack.createOrg({ units: 0 });
    const broke = await verifyOn(stack, org.member.token, { nin: '31415926535', reason: 'corporate' }, 'k-402');
    const broke2 = await verifyOn(stack, org.member.token, { nin: '31415926535', reason: 'corporate' }, 'k-402');
    expect([broke.status, broke2.status]).toEqual([402, 402]);
    expect(broke2.body).toEqual(broke.body);
    expect(broke2.headers.get('idempotent-replayed')).toBe('true');

    const fixture = await verifyOn(stack, org.member.token, { nin: '99999999999', reason: 'corporate' }, 'k-404');
    const fixture2 = await verifyOn(stack, org.member.token, { nin: '99999999999', reason: 'corporate' }, 'k-404');
    expect([fixture.status, fixture2.status]).toEqual([404, 404]);
    expect(fixture2.body).toEqual({ detail: 'NIN not found' });
    expect(fixture2.headers.get('idempotent-replayed')).toBe('true');

    const funded = await stack.createOrg({ units: 1 });
    const failed = await verifyOn(stack, funded.member.token, { nin: '50019876543', reason: 'corporate' }, 'k-502');
    expect(failed.status).toBe(502);
    const again = await verifyOn(stack, funded.member.token, { nin: '50019876543', reason: 'corporate' }, 'k-502');
    expect(again.status).toBe(502);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.body.reference_id).not.toBe(failed.body.reference_id);
    expect(await walletOf(stack, funded.orgId)).toEqual({ units: 1, reserved: 0 });
  });

  it('When the key is blank or longer than 255 characters, then 400', async () => {
    const org = await stack.createOrg({ units: 1 });
    for (const key of ['x'.repeat(256), ' ']) {
      const res = await verifyOn(stack, org.member.token, { nin: '12345678901', reason: 'corporate' }, key);
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/Idempotency-Key/);
    }
    const longest = await verifyOn(stack, org.member.token, { nin: '12345678901', reason: 'corporate' }, 'k'.repeat(255));
    expect(longest.status).toBe(200);
  });
});
