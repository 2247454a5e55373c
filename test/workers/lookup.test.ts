// The verification jobs (lookup, sweep, retention) run by hand against a real stack and real queues.
import type { OrgFixture, Stack } from '../setup/harness.ts';
import { startWorkerHarness, type WorkerHarness } from '../setup/worker-harness.ts';
import { finishedJob } from '../setup/jobs.ts';
import type { Job } from 'bullmq';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createIdentityAuthority } from '../../src/adapters/identity-authority/index.ts';
import { jobIds, QUEUES } from '../../src/jobs/catalog.ts';
import { isBackgroundPriority } from '../../src/modules/capacity/fair-share.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { createProducer, type Producer } from '../../src/jobs/producer.ts';
import { redisTarget } from '../../src/lib/redis.ts';
import type { WorkerDeps } from '../../src/context.ts';
import { verificationProcessors } from '../../workers/processors/verification.ts';

const log = createLogger({ level: 'silent' });
const lookup = verificationProcessors['verification.lookup']!;
const sweep = verificationProcessors['verification.sweep']!;
const erase = verificationProcessors['retention.erase']!;

// No workers in this process: each lookup job stays queued, and the tests run the processors by
// hand (callers give up after 300 ms, so every live call answers 504 with its reference).
let stack: Stack;
let producer: Producer;
let deps: WorkerDeps;
let harness: WorkerHarness;
beforeAll(async () => {
  harness = await startWorkerHarness({ env: { VERIFY_WAIT_MS: '300' } });
  ({ stack, producer, deps } = harness);
});
afterAll(async () => harness?.close());

const lookups = () => producer.queue(QUEUES.lookups);
const wallet = (orgId: number) =>
  stack.db.one(sql.type(z.object({ units: z.coerce.number(), reserved: z.coerce.number() }))`SELECT units, reserved FROM wallets WHERE org_id = ${orgId}`);
const debits = (ref: string) =>
  stack.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM wallet_transactions WHERE reference = ${ref} AND kind = 'verification'`);
const rowOf = (ref: string) =>
  stack.db.one(sql.type(z.object({ status: z.string(), failure_code: z.string().nullable(), holds_unit: z.boolean(), query_enc: z.unknown(), record_enc: z.unknown(), attempts: z.number() }))`
    SELECT status, failure_code, holds_unit, query_enc, record_enc, attempts FROM verifications WHERE reference_id = ${ref}`);

/** A live verification left pending: the API answered 504 and its job waits in the queue. */
async function pending(org: OrgFixture, nin: string): Promise<{ ref: string; job: Job }> {
  const res = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin, reason: 'corporate' } });
  expect(res.status).toBe(504);
  const ref = res.body.reference_id as string;
  const job = (await lookups().getJob(jobIds.lookup(ref)))!;
  expect(job).toBeTruthy();
  return { ref, job };
}

describe('producer roles', () => {
  it('When a producer is made for a worker, then its Redis connection waits out an outage; an API producer fails fast', async () => {
    expect(producer.redis.options).toMatchObject({ maxRetriesPerRequest: null, enableOfflineQueue: true });
    const api = await createProducer({ redis: redisTarget(stack.config), prefix: stack.config.REDIS_PREFIX, role: 'api' });
    try {
      expect(api.redis.options).toMatchObject({ maxRetriesPerRequest: 1, enableOfflineQueue: false });
    } finally {
      await api.close();
    }
  });
});

describe('verification.lookup', () => {
  it('When a lookup is queued, then its job carries the reference, the organisation, the request id and the query as ciphertext only', async () => {
    const firstOrg = await stack.createOrg({ units: 3 });
    const { ref, job } = await pending(firstOrg, '31415926535');
    expect(job.id).toBe(`lookup-${ref}`);
    expect(Object.keys(job.data).sort()).toEqual(['orgId', 'query', 'referenceId', 'requestId']);
    expect(job.data.orgId).toBe(firstOrg.orgId);
    // Every lookup carries a priority (fairness between organisations), a synchronous lookup's in the
    // synchronous lane. (Its value depends on what the file's other tests left in flight: they run in
    // any order, so it is 1 only when this test runs first.)
    expect(Number.isInteger(job.opts.priority) && job.opts.priority! >= 1).toBe(true);
    expect(isBackgroundPriority(job.opts.priority!)).toBe(false);
    expect(Object.keys(job.data.query).sort()).toEqual(['data', 'keyId']);
    expect(JSON.stringify(job.data)).not.toContain('31415926535');
    expect(Buffer.from(job.data.query.data, 'base64').toString('latin1')).not.toContain('31415926535');
    expect(await rowOf(ref)).toMatchObject({ status: 'pending', holds_unit: true });
    expect(await wallet(firstOrg.orgId)).toEqual({ units: 3, reserved: 1 });
  });

  it('When the same lookup runs several times, at once and again later, then the unit is debited exactly once', async () => {
    const org = await stack.createOrg({ units: 3 });
    const { ref: firstRef, job } = await pending(org, '31415926535');
    const payload = { referenceId: firstRef };
    const results = await Promise.all([lookup(payload, job, deps, log), lookup(payload, job, deps, log), lookup(payload, job, deps, log)]);
    // Only the run that settled carries the sealed record; the others read the settled row.
    expect(results.map((r) => r.outcome)).toEqual(['found', 'found', 'found']);
    expect(results.filter((r) => r.record).length).toBe(1);
    expect(await lookup(payload, job, deps, log)).toEqual({ outcome: 'found' });
    expect(await debits(firstRef)).toBe(1);
    expect(await wallet(org.orgId)).toEqual({ units: 2, reserved: 0 });
    expect(await rowOf(firstRef)).toMatchObject({ status: 'found', holds_unit: false });
  });

  it('When the upstream refuses the request with a 4xx, then it is not retried and the unit is released', async () => {
    const org = await stack.createOrg({ units: 1 });
    const { ref, job } = await pending(org, '27182818284');
    const wrongKey = createIdentityAuthority({ dialect: 'sandbox', baseUrl: stack.config.identityBaseUrl, apiKey: 'not-the-key', timeoutMs: 1000 });
    const calls = stack.identitySim.stats().calls;
    const result = await lookup({ referenceId: ref }, job, { ...deps, identity: wrongKey }, log);
    expect(result).toEqual({ outcome: 'failed', code: 'upstream_rejected' });
    expect(stack.identitySim.stats().calls).toBe(calls + 1);
    expect(await rowOf(ref)).toMatchObject({ status: 'failed', failure_code: 'upstream_rejected', attempts: 1, holds_unit: false });
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 0 });
    const requery = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } });
    expect(requery.status).toBe(502);
    expect(requery.body).toMatchObject({ reference_id: ref, code: 'upstream_rejected' });
  });
});

describe('verification.sweep', () => {
  it('When a pending lookup lost its job, then the sweep queues it again; past an hour it is failed and its unit released', async () => {
    const org = await stack.createOrg({ units: 5 });
    const lost = await pending(org, '16180339887');
    const waiting = await pending(org, '14142135623');
    const abandoned = await pending(org, '17320508075');
    const fresh = await pending(org, '22360679774');
    const age = (ref: string, ms: number) => stack.db.query(sql.unsafe`UPDATE verifications SET created_at = now() - ${`${ms} milliseconds`}::interval WHERE reference_id = ${ref}`);
    await age(lost.ref, 10 * 60_000);
    await age(waiting.ref, 10 * 60_000);
    await age(abandoned.ref, 2 * 3600_000);
    await lost.job.remove();
    expect(await lookups().getJob(jobIds.lookup(lost.ref))).toBeUndefined();

    const result = await sweep({}, lost.job, deps, log);
    expect(result).toEqual({ requeued: 1, released: 1 });
    const requeued = await lookups().getJob(jobIds.lookup(lost.ref));
    expect(requeued?.data).toEqual({ referenceId: lost.ref, orgId: expect.any(Number) });
    expect(requeued?.opts.priority).toBe(1);
    expect(await requeued!.getState()).toBe('prioritized');
    expect(await rowOf(abandoned.ref)).toMatchObject({ status: 'failed', failure_code: 'lookup_abandoned', holds_unit: false });
    for (const r of [lost, waiting, fresh]) expect((await rowOf(r.ref)).status).toBe('pending');
    expect(await wallet(org.orgId)).toEqual({ units: 5, reserved: 3 });

    // A second pass finds the re-queued job in place and leaves it alone.
    expect(await sweep({}, lost.job, deps, log)).toEqual({ requeued: 0, released: 0 });
  });
});

describe('retention.erase', () => {
  it('When a record is past its retention date, then its personal data is erased and a requery answers 404 expired', async () => {
    const org = await stack.createOrg({ units: 0 });
    const kept = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '12345678901', reason: 'corporate' } });
    const old = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '12345678902', reason: 'corporate' } });
    const oldRef = old.body.data.reference_id as string;
    await stack.db.query(sql.unsafe`UPDATE verifications SET expires_at = now() - interval '1 minute' WHERE reference_id = ${oldRef}`);
    await stack.db.query(sql.unsafe`
      INSERT INTO idempotency_keys (org_id, key, endpoint, request_hash, created_at)
      VALUES (${org.orgId}, 'stale', 'nin', 'x', now() - interval '25 hours'), (${org.orgId}, 'recent', 'nin', 'y', now() - interval '23 hours')`);

    const result = await erase({}, {} as Job, deps, log);
    expect(result.erased).toBeGreaterThanOrEqual(1);
    expect(result.idempotencyKeysDeleted).toBeGreaterThanOrEqual(1);
    expect(await rowOf(oldRef)).toMatchObject({ status: 'expired', query_enc: null, record_enc: null });
    expect((await rowOf(kept.body.data.reference_id)).status).toBe('found');
    const keys = await stack.db.anyFirst(sql.type(z.object({ key: z.string() }))`SELECT key FROM idempotency_keys WHERE org_id = ${org.orgId} ORDER BY key`);
    expect(keys).toEqual(['recent']);

    const requery = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: oldRef } });
    expect(requery.status).toBe(404);
    expect(requery.body).toEqual({ detail: 'Record has expired and was erased under the retention policy' });
    const live = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: kept.body.data.reference_id } });
    expect(live.status).toBe(200);
  });
});

describe('real workers', () => {
  it('When workers start, then queued lookups run, and an already-settled one is not debited again', async () => {
    const org = await stack.createOrg({ units: 3 });
    const { ref } = await pending(org, '31415926536');
    // Settled by hand while its job still waits in the queue.
    const queued = (await lookups().getJob(jobIds.lookup(ref)))!;
    expect(await lookup({ referenceId: ref }, queued, deps, log)).toMatchObject({ outcome: 'found' });
    expect(await debits(ref)).toBe(1);
    // The other tests of this file need lookups left queued: the workers stop again at the end.
    const running = await stack.startWorkers();
    try {
      const done = await finishedJob(stack, QUEUES.lookups, jobIds.lookup(ref));
      expect(done).toMatchObject({ state: 'completed', returnvalue: { outcome: 'found' } });
    } finally {
      await running.close();
    }
    expect(await debits(ref)).toBe(1);
    expect(await wallet(org.orgId)).toEqual({ units: 2, reserved: 0 });
  });
});

describe('retention of sealed records in Redis', () => {
  // Moving the clock past retention also erases every record of this stack that exists now; the
  // other tests make their own records and read them within the test, so the order does not matter.
  it('When the retention period has passed, then the lookup event stream keeps no entry older than it', async () => {
    const events = deps.producer.queue(QUEUES.lookups).toKey('events');
    const redis = deps.producer.redis;
    await redis.xadd(events, '*', 'event', 'probe');
    expect(await redis.xlen(events)).toBeGreaterThan(0);
    const later = new Date(Date.now() + (stack.config.RECORD_RETENTION_DAYS + 1) * 24 * 3600 * 1000);
    await erase({}, {} as Job, { ...deps, clock: { now: () => later } }, log);
    expect(await redis.xlen(events)).toBe(0);
  });
});
