import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

const ACCEPTED = 'Verification accepted; requery with the reference_id';

let stack: Stack;
let seq = 0;
const liveNin = () => `4${String(Date.now() % 1e6).padStart(6, '0')}${String(seq++ % 1e4).padStart(4, '0')}`;
const post = (org: OrgFixture, path: string, json: unknown, prefer?: string) =>
  stack.api('POST', path, { token: org.member.token, json, ...(prefer ? { headers: { Prefer: prefer } } : {}) });
const requery = (org: OrgFixture, ref: string) => stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } });
const ended = (org: OrgFixture, ref: string) =>
  waitFor(async () => {
    const r = await requery(org, ref);
    return r.status === 202 ? null : r;
  }, { what: `${ref} ended`, timeoutMs: 60_000, intervalMs: 200 });

beforeAll(async () => {
  // One authority slot for everyone: the order the queue hands lookups out is the order they run.
  stack = await startStack({ env: { IDENTITY_MAX_CONCURRENCY: '1' } });
});
afterAll(async () => stack?.close());

describe('asynchronous verification on every endpoint, and its place in the queue', () => {
  it('When phone and demography verifications ask for respond-async (among other preferences), then 202 and the requery gives the synchronous answer; other preferences alone change nothing', async () => {
    const org = await stack.createOrg({ units: 5 });
    const phoneBody = { phone_no: '08031234567', reason: 'corporate' };
    const phone = await post(org, '/v1/verify-nin/phone', phoneBody, 'wait=10, respond-async');
    expect(phone.status).toBe(202);
    expect(phone.headers.get('preference-applied')).toBe('respond-async');
    expect(phone.body).toEqual({ status: 'pending', message: ACCEPTED, reference_id: expect.any(String), verdict: null, verdict_reasons: [] });
    const sync = await post(org, '/v1/verify-nin/phone', phoneBody, 'return=minimal');
    expect(sync.status).toBe(200);
    expect(sync.headers.get('preference-applied')).toBeNull();
    const phoneAnswer = await ended(org, phone.body.reference_id);
    expect(phoneAnswer.status).toBe(200);
    const { reference_id: _a, transaction_id: _b, ...asyncRecord } = phoneAnswer.body.data;
    const { reference_id: _c, transaction_id: _d, ...syncRecord } = sync.body.data;
    expect(asyncRecord).toEqual(syncRecord);

    const demo = await post(org, '/v1/verify-nin/demography', { first_name: 'Ada', last_name: 'Obi', date_of_birth: '01-02-1990', gender: 'f' }, 'Respond-Async');
    expect(demo.status).toBe(202);
    const demoAnswer = await ended(org, demo.body.reference_id);
    expect(demoAnswer.status).toBe(200);
    expect(demoAnswer.body.data.fname).toBe('Ada');
    expect(await stack.db.one(sql.type(z.object({ units: z.coerce.number(), reserved: z.coerce.number() }))`SELECT units, reserved FROM wallets WHERE org_id = ${org.orgId}`)).toEqual({ units: 2, reserved: 0 });
  });

  it('When a match-only verification asks for respond-async, then 202 and the requery gives the synchronous match\'s data in the requery\'s answer', async () => {
    const org = await stack.createOrg({ units: 5 });
    const body = { nin: liveNin(), reason: 'corporate', fname: 'Ada', lname: 'Obi' };
    const accepted = await post(org, '/v1/verify-nin/match', body, 'respond-async');
    expect(accepted.status).toBe(202);
    const sync = await post(org, '/v1/verify-nin/match', body);
    expect(sync.status).toBe(200);
    const answer = await ended(org, accepted.body.reference_id);
    expect(answer.status).toBe(200);
    // The requery's one answer for a found verification, however it was made.
    expect(sync.body).toMatchObject(sync.body.data.all_match ? { verdict: 'verified', verdict_reasons: [] } : { verdict: 'not_verified', verdict_reasons: ['details_no_match'] });
    expect(answer.body).toEqual({ status: 'success', message: 'Record retrieved successfully', data: { ...sync.body.data, reference_id: accepted.body.reference_id }, verdict: sync.body.verdict, verdict_reasons: sync.body.verdict_reasons, consent: null });
  });

  it('When asynchronous lookups are queued and a synchronous one arrives, then the synchronous one runs before the asynchronous ones still waiting', async () => {
    const org = await stack.createOrg({ units: 20 });
    const other = await stack.createOrg({ units: 5 });
    stack.identitySim.configure({ latencyMs: 300 });
    // The reasons list is warm (fetched by the calls above or here): the count below is lookups only.
    expect((await stack.api('GET', '/v1/nimc-reasons', { token: org.member.token })).status).toBe(200);
    const acceptedAtStart = stack.identitySim.stats().accepted;
    try {
      const refs: string[] = [];
      for (let i = 0; i < 12; i++) {
        const r = await post(org, '/v1/verify-nin', { nin: liveNin(), reason: 'corporate' }, 'respond-async');
        expect(r.status).toBe(202);
        refs.push(r.body.reference_id);
      }
      // Ordered by events: the synchronous lookup is sent, and once its pending row exists (it is
      // queued) the authority's count of calls taken says how many may run before it.
      const syncAnswer = post(other, '/v1/verify-nin', { nin: liveNin(), reason: 'corporate' });
      await waitFor(async () =>
        (await stack.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM verifications WHERE org_id = ${other.orgId}`)) === 1 ? true : null,
        { what: 'the synchronous lookup queued' },
      );
      const startedBefore = stack.identitySim.stats().accepted - acceptedAtStart;
      // Still enough waiting for the order to show.
      expect(startedBefore).toBeLessThan(9);
      const sync = await syncAnswer;
      expect(sync.status).toBe(200);
      for (const ref of refs) expect((await ended(org, ref)).status).toBe(200);
      const order = await stack.db.any(sql.type(z.object({ reference_id: z.string() }))`
        SELECT reference_id FROM verifications WHERE org_id IN (${org.orgId}, ${other.orgId}) ORDER BY completed_at, reference_id`);
      const position = order.findIndex((r) => r.reference_id === sync.body.data.reference_id);
      // With one slot, lookups end in the order they started. Before the synchronous one: at most
      // those the authority had taken when its row was written (its own included, if it already
      // went), and the one that may start while its job is being added; first in, first out would
      // put it last (12).
      expect(position).toBeLessThanOrEqual(startedBefore + 1);
    } finally {
      stack.identitySim.configure({ latencyMs: 0 });
    }
  });

  it("When one organisation has many asynchronous lookups queued and another adds a few, then the other's run in turn with them, not after them", async () => {
    const big = await stack.createOrg({ units: 20 });
    const small = await stack.createOrg({ units: 5 });
    stack.identitySim.configure({ latencyMs: 200 });
    try {
      const bigRefs: string[] = [];
      for (let i = 0; i < 14; i++) bigRefs.push((await post(big, '/v1/verify-nin', { nin: liveNin(), reason: 'corporate' }, 'respond-async')).body.reference_id);
      const endedBefore = await stack.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`
        SELECT count(*) AS n FROM verifications WHERE org_id = ${big.orgId} AND status <> 'pending'`);
      expect(endedBefore).toBeLessThan(5);
      const smallRefs: string[] = [];
      for (let i = 0; i < 2; i++) smallRefs.push((await post(small, '/v1/verify-nin', { nin: liveNin(), reason: 'corporate' }, 'respond-async')).body.reference_id);
      for (const ref of bigRefs) expect((await ended(big, ref)).status).toBe(200);
      for (const ref of smallRefs) expect((await ended(small, ref)).status).toBe(200);
      const order = (await stack.db.any(sql.type(z.object({ reference_id: z.string() }))`
        SELECT reference_id FROM verifications WHERE org_id IN (${big.orgId}, ${small.orgId}) ORDER BY completed_at, reference_id`)).map((r) => r.reference_id);
      // The newcomer's two take turns with the backlog (first in, first out they would be the last
      // two, positions 14 and 15): ahead of them at most what had ended, the one running, a couple
      // that started while they were being added, and one of the backlog's per turn.
      const lastSmall = Math.max(...smallRefs.map((r) => order.indexOf(r)));
      expect(lastSmall).toBeLessThanOrEqual(endedBefore + 7);
    } finally {
      stack.identitySim.configure({ latencyMs: 0 });
    }
  });

  it('When GET /verifications is filtered by mode, delivery and batch_id, then rows are selected by how they were asked for; bad values are 400', async () => {
    const org = await stack.createOrg({ units: 0, subscription: false });
    const a = await post(org, '/v1/verify-nin', { nin: '12345678901', reason: 'corporate' }, 'respond-async');
    const s = await post(org, '/v1/verify-nin', { nin: '12345678901', reason: 'corporate' });
    const refs = async (query: string) => {
      const r = await stack.api('GET', `/v1/verifications${query}`, { token: org.member.token });
      expect(r.status).toBe(200);
      return r.body.data.map((v: any) => [v.reference_id, v.kind, v.mode, v.batch_id]);
    };
    expect(await refs('?mode=async')).toEqual([[a.body.reference_id, 'nin', 'async', null]]);
    expect(await refs('?delivery=sync')).toEqual([[s.body.data.reference_id, 'nin', 'sync', null]]);
    expect(await refs('?mode=nin&delivery=async')).toEqual([[a.body.reference_id, 'nin', 'async', null]]);
    expect(await refs('?mode=batch')).toEqual([]);
    expect(await refs('?batch_id=BAT-ABCDEFGHJK12')).toEqual([]);
    for (const bad of ['?delivery=later', '?batch_id=BAT-1', '?mode=queued']) {
      const r = await stack.api('GET', `/v1/verifications${bad}`, { token: org.member.token });
      expect(r.status).toBe(400);
      expect(typeof r.body.detail).toBe('string');
    }
  });
});
