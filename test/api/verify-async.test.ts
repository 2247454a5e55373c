import { randomBytes } from 'node:crypto';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { QUEUES, jobIds } from '../../src/jobs/catalog.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

const REF = /^REF-[A-Z0-9]{12}$/;
const ACCEPTED = 'Verification accepted; requery with the reference_id';
const METRICS_TOKEN = `metrics-${randomBytes(12).toString('hex')}`;

const walletRow = z.object({ units: z.coerce.number(), reserved: z.coerce.number() });
const n = z.object({ n: z.coerce.number() });

let stack: Stack;
let seq = 0;
/** A live NIN the simulator finds (first digit 3), new for every call. */
const liveNin = () => `3${String(Date.now() % 1e6).padStart(6, '0')}${String(seq++ % 1e4).padStart(4, '0')}`;

const wallet = (orgId: number) => stack.db.one(sql.type(walletRow)`SELECT units, reserved FROM wallets WHERE org_id = ${orgId}`);
const debits = (ref: string) => stack.db.oneFirst(sql.type(n)`SELECT count(*) AS n FROM wallet_transactions WHERE kind = 'verification' AND reference = ${ref}`);
const asyncVerify = (org: OrgFixture, nin: string, headers: Record<string, string> = {}) =>
  stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin, reason: 'corporate' }, headers: { Prefer: 'respond-async', ...headers } });
const requery = (org: OrgFixture, ref: string) => stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } });

function expectAccepted(r: { status: number; body: any; headers: Headers }): string {
  expect(r.status).toBe(202);
  expect(r.headers.get('preference-applied')).toBe('respond-async');
  expect(r.body).toEqual({ status: 'pending', message: ACCEPTED, reference_id: expect.stringMatching(REF), verdict: null, verdict_reasons: [] });
  return r.body.reference_id;
}

/** Until the API itself refuses synchronous lookups with the circuit open: the authority is down for everyone. */
async function openCircuit(org: OrgFixture): Promise<void> {
  await waitFor(async () => (await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: liveNin(), reason: 'corporate' } })).body.code === 'upstream_circuit_open', {
    what: 'the circuit to open',
    timeoutMs: 15_000,
  });
}

beforeAll(async () => {
  stack = await startStack({ env: { METRICS_TOKEN, IDENTITY_BREAKER_MIN_CALLS: '4', IDENTITY_BREAKER_COOLDOWN_MS: '1000', IDENTITY_MAX_ATTEMPTS: '1' } });
});
afterAll(async () => stack?.close());

describe('Prefer: respond-async', () => {
  it('When a fixture NIN is verified asynchronously, then 202 at once and the requery gives the synchronous record in the requery\'s answer (found, and 404 for the not-found fixture)', async () => {
    const org = await stack.createOrg({ units: 0, subscription: false });
    const ref = expectAccepted(await asyncVerify(org, '12345678901'));
    const sync = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '12345678901', reason: 'corporate' } });
    const r = await requery(org, ref);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'success', message: 'Record retrieved successfully', data: { ...sync.body.data, reference_id: ref }, verdict: 'verified', verdict_reasons: [], consent: null });

    const missing = expectAccepted(await asyncVerify(org, '99999999999'));
    const m = await requery(org, missing);
    expect(m.status).toBe(404);
    expect(m.body).toEqual({ detail: 'NIN not found' });
    expect(await wallet(org.orgId)).toEqual({ units: 0, reserved: 0 });
  });

  it('When a live lookup is accepted while the authority is down and its circuit open, then requery answers 202 until the outage ends, then 200, charged exactly once', async () => {
    const org = await stack.createOrg({ units: 5 });
    stack.identitySim.outage({ mode: '503', forMs: 120_000 });
    try {
      await openCircuit(org);
      const ref = expectAccepted(await asyncVerify(org, liveNin()));
      expect(await wallet(org.orgId)).toEqual({ units: 5, reserved: 1 });
      // Tried again while the authority answers 503: every try fails, so the requery can only be 202.
      const before = stack.identitySim.stats().statuses['503'] ?? 0;
      // Nothing else calls the authority now (the API refuses with the circuit open): a new 503 is a try of this lookup.
      await waitFor(() => (stack.identitySim.stats().statuses['503'] ?? 0) > before, { what: 'a try during the outage', timeoutMs: 20_000 });
      const waiting = await requery(org, ref);
      expect(waiting.status).toBe(202);
      expect(waiting.body).toEqual({ status: 'pending', message: 'Verification still in progress', reference_id: ref, verdict: null, verdict_reasons: [], consent: null });
      stack.identitySim.outage({ mode: 'none' });
      const done = await waitFor(async () => {
        const r = await requery(org, ref);
        return r.status === 202 ? null : r;
      }, { what: 'the lookup to end after the outage', timeoutMs: 60_000, intervalMs: 250 });
      expect(done.status).toBe(200);
      expect(Object.keys(done.body)).toEqual(['status', 'message', 'data', 'verdict', 'verdict_reasons', 'consent']);
      expect(done.body.data.reference_id).toBe(ref);
      expect(await wallet(org.orgId)).toEqual({ units: 4, reserved: 0 });
      expect(await debits(ref)).toBe(1);
      const listed = await stack.api('GET', '/v1/verifications?mode=async', { token: org.member.token });
      expect(listed.body.data).toEqual([expect.objectContaining({ reference_id: ref, mode: 'async', kind: 'nin', delivery: 'async', batch_id: null, status: 'found', charged: true })]);
    } finally {
      stack.identitySim.outage({ mode: 'none' });
    }
  });

  it('When an asynchronous call is replayed with its Idempotency-Key, then the same 202 while it waits and the final answer once it has ended, one charge', async () => {
    const org = await stack.createOrg({ units: 3 });
    const key = `async-${randomBytes(6).toString('hex')}`;
    const nin = liveNin();
    stack.identitySim.outage({ mode: '503', forMs: 120_000 });
    let ref: string;
    try {
      ref = expectAccepted(await asyncVerify(org, nin, { 'Idempotency-Key': key }));
      const replay = await asyncVerify(org, nin, { 'Idempotency-Key': key });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(expectAccepted(replay)).toBe(ref);
      const pending = await stack.api('GET', '/v1/verifications?status=pending', { token: org.member.token });
      expect(pending.body.data.map((v: any) => [v.reference_id, v.delivery])).toEqual([[ref, 'async']]);
    } finally {
      stack.identitySim.outage({ mode: 'none' });
    }
    await waitFor(async () => (await requery(org, ref)).status === 200, { what: 'the lookup to end', timeoutMs: 60_000, intervalMs: 250 });
    const final = await asyncVerify(org, nin, { 'Idempotency-Key': key });
    expect(final.status).toBe(200);
    expect(final.headers.get('idempotent-replayed')).toBe('true');
    expect(final.body.data.reference_id).toBe(ref);
    expect(await wallet(org.orgId)).toEqual({ units: 2, reserved: 0 });
    expect(await debits(ref)).toBe(1);
  });

  it('When an organisation is at its in-flight cap, then asynchronous calls are still accepted and all complete', async () => {
    const org = await stack.createOrg({ units: 40, maxInFlight: 1 });
    // An earlier outage may have left the circuit open or half-open: closed again first.
    await waitFor(async () => (await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: liveNin(), reason: 'corporate' } })).status === 200, {
      what: 'the authority answering synchronous calls',
      timeoutMs: 30_000,
      intervalMs: 200,
    });
    const units = (await wallet(org.orgId)).units;
    stack.identitySim.configure({ latencyMs: 700 });
    try {
      const syncs = await Promise.all([0, 1].map(() => stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: liveNin(), reason: 'corporate' } })));
      // The cap is in force for synchronous calls...
      expect(syncs.map((r) => r.status).sort()).toEqual([200, 429]);
      // ...and never for asynchronous ones, however many at once.
      const accepted = await Promise.all([0, 1, 2, 3, 4].map(() => asyncVerify(org, liveNin())));
      const refs = accepted.map(expectAccepted);
      for (const ref of refs) await waitFor(async () => (await requery(org, ref)).status === 200, { what: `${ref} found`, timeoutMs: 60_000, intervalMs: 250 });
      expect(await wallet(org.orgId)).toEqual({ units: units - 6, reserved: 0 });
    } finally {
      stack.identitySim.configure({ latencyMs: 0 });
    }
  });

  it('When the sweep runs over asynchronous rows pending for hours, then it leaves them alone (a synchronous one is abandoned), re-queues one whose job was lost, and it completes', async () => {
    const org = await stack.createOrg({ units: 5 });
    stack.identitySim.outage({ mode: '503', forMs: 120_000 });
    let ref: string;
    let lost: string;
    try {
      ref = expectAccepted(await asyncVerify(org, liveNin()));
      lost = expectAccepted(await asyncVerify(org, liveNin()));
      const queue = stack.workers!.deps.producer.queue(QUEUES.lookups);
      await waitFor(async () => (await queue.getJob(jobIds.lookup(lost))) !== undefined, { what: 'the job queued' });
      // Two hours old: past both of the sweep's rules for synchronous rows (120 s, 1 h).
      await stack.db.query(sql.unsafe`UPDATE verifications SET created_at = now() - interval '2 hours' WHERE reference_id IN (${ref}, ${lost})`);
      const syncRef = `REF-SYNC${randomBytes(4).toString('hex').toUpperCase()}`;
      await stack.db.query(sql.unsafe`
        WITH hold AS (UPDATE wallets SET reserved = reserved + 1 WHERE org_id = ${org.orgId} RETURNING org_id)
        INSERT INTO verifications (reference_id, org_id, user_id, mode, reason, status, holds_unit, created_at, expires_at)
        SELECT ${syncRef}, org_id, (SELECT id FROM users WHERE username = ${org.member.username}), 'nin', 'corporate', 'pending', true, now() - interval '2 hours', now() + interval '1 day' FROM hold`);
      // The lost job: gone from Redis as after a flush.
      await waitFor(async () => {
        const job = await queue.getJob(jobIds.lookup(lost));
        if (!job) return true;
        if ((await job.getState()) === 'active') return false;
        await job.remove().catch(() => undefined);
        return (await queue.getJob(jobIds.lookup(lost))) === undefined;
      }, { what: 'the job removed' });
      const { sweepPending } = await import('../../src/modules/verification/index.ts');
      const swept = await sweepPending(stack.workers!.deps, stack.workers!.deps.logger);
      expect(swept).toEqual({ requeued: 1, released: 1 });
      const status = (r: string) => stack.db.one(sql.type(z.object({ status: z.string(), failure_code: z.string().nullable() }))`SELECT status, failure_code FROM verifications WHERE reference_id = ${r}`);
      expect(await status(syncRef)).toEqual({ status: 'failed', failure_code: 'lookup_abandoned' });
      expect(await status(ref)).toEqual({ status: 'pending', failure_code: null });
      expect(await status(lost)).toEqual({ status: 'pending', failure_code: null });
      expect(await queue.getJob(jobIds.lookup(lost))).toBeDefined();
    } finally {
      stack.identitySim.outage({ mode: 'none' });
    }
    for (const r of [ref, lost]) await waitFor(async () => (await requery(org, r)).status === 200, { what: `${r} found`, timeoutMs: 60_000, intervalMs: 250 });
    expect(await wallet(org.orgId)).toEqual({ units: 3, reserved: 0 });
  });

  it('When lookups wait, then /metrics shows them by delivery', async () => {
    const org = await stack.createOrg({ units: 5 });
    stack.identitySim.outage({ mode: '503', forMs: 120_000 });
    try {
      const before = await stack.db.oneFirst(sql.type(n)`SELECT count(*) AS n FROM verifications WHERE status = 'pending' AND delivery = 'async'`);
      expectAccepted(await asyncVerify(org, liveNin()));
      const text = (await stack.api('GET', '/metrics', { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } })).text;
      expect(text).toContain(`verifications_pending{delivery="async",process="api"} ${before + 1}`);
    } finally {
      stack.identitySim.outage({ mode: 'none' });
    }
  });
});

describe('ASYNC_MAX_WAIT_HOURS and ORG_MAX_PENDING', () => {
  let short: Stack;
  beforeAll(async () => {
    // 0.002 h: 7.2 s.
    short = await startStack({ env: { ASYNC_MAX_WAIT_HOURS: '0.002', ORG_MAX_PENDING: '2', IDENTITY_MAX_ATTEMPTS: '1' } });
  });
  afterAll(async () => short?.close());

  it('When the authority stays down past the deadline, then the lookup ends failed upstream_unavailable with its unit released; beyond ORG_MAX_PENDING a request is 429 org_pending_cap until they end', async () => {
    const org = await short.createOrg({ units: 5 });
    const call = () => short.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: liveNin(), reason: 'corporate' }, headers: { Prefer: 'respond-async' } });
    short.identitySim.outage({ mode: '503', forMs: 300_000 });
    try {
      const refs = [expectAccepted(await call()), expectAccepted(await call())];
      const refused = await call();
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ code: 'org_pending_cap' });
      expect(typeof refused.body.detail).toBe('string');
      expect(await short.db.one(sql.type(walletRow)`SELECT units, reserved FROM wallets WHERE org_id = ${org.orgId}`)).toEqual({ units: 5, reserved: 2 });
      for (const ref of refs) {
        const r = await waitFor(async () => {
          const q = await short.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } });
          return q.status === 202 ? null : q;
        }, { what: 'the deadline', timeoutMs: 60_000, intervalMs: 250 });
        expect(r.status).toBe(502);
        expect(r.body).toEqual({ detail: 'Identity authority unavailable, nothing was charged', reference_id: ref, code: 'upstream_unavailable' });
      }
      expect(await short.db.one(sql.type(walletRow)`SELECT units, reserved FROM wallets WHERE org_id = ${org.orgId}`)).toEqual({ units: 5, reserved: 0 });
      // Ended rows no longer count against the cap.
      expectAccepted(await call());
    } finally {
      short.identitySim.outage({ mode: 'none' });
    }
  });
});
