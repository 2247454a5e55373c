import { Queue } from 'bullmq';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { jobIds, QUEUES, queuePrefix } from '../../src/jobs/catalog.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { sweepPending } from '../../src/modules/verification/index.ts';
import { runLookup } from '../../src/modules/verification/lookup.job.ts';
import { startFaceWorker, type RunningFaceWorker } from '../../workers/face.ts';
import { startStack, type Stack } from '../setup/harness.ts';
import { faceConsent, faceMatchReads, HOPPER_NIN, HOPPER_SELFIE, testFaceEngine } from '../setup/face-match.ts';
import { until } from '../setup/wait.ts';

/**
 * Nothing is charged when the record is not found, refused or failed. A face match whose record was
 * found but whose comparison failed (the face worker's model throwing, or no answer within
 * FACE_WAIT_MS) charges nothing, synchronously or asynchronously, and gives its held unit back once,
 * also when its lookup job runs again or the request is retried with its Idempotency-Key.
 *
 * The face worker runs in this process with an engine of the test's own (test/setup/face-match.ts):
 * it accepts every selfie, and its reference photo step fails, hangs until released, or answers a close match.
 */
const selfie = HOPPER_SELFIE;
const consent = faceConsent;

const t = testFaceEngine();
t.mode = 'fail';
const engine = t.engine;
const releaseHung = () => t.releaseHung();

let stack: Stack;
let faceWorker: RunningFaceWorker;
// The service's own wait for a face job, kept short so a hanging comparison ends the request soon.
const FACE_WAIT_MS = 4000;

beforeAll(async () => {
  stack = await startStack({ env: { FACE_WAIT_MS: String(FACE_WAIT_MS), VERIFY_WAIT_MS: '3000', FACE_NICE: '0' } });
  faceWorker = await startFaceWorker(stack.config, createLogger({ level: 'silent' }), { engine });
}, 60_000);
afterAll(async () => {
  releaseHung();
  await faceWorker?.close();
  await stack?.close();
});

const { ledger, wallet, verification } = faceMatchReads(() => stack.db);
const face = (token: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
  stack.api('POST', '/v1/verify-nin/face', { token, json: { nin: HOPPER_NIN, reason: 'corporate', selfie, consent: consent(), ...body }, ...(headers ? { headers } : {}) });
const requery = (token: string, ref: string) => stack.api('POST', '/v1/verify-nin/requery', { token, json: { reference_id: ref } });

describe('a failed comparison charges nothing', () => {
  it('When the face model fails on a found record (synchronous), then 503 face_unavailable with the reference, nothing charged, the unit released once; the requery answers the same and a rerun of its lookup job changes nothing', async () => {
    t.mode = 'fail';
    const org = await stack.createOrg({ units: 5 });
    const r = await face(org.member.token, {});
    expect(r.status, r.text).toBe(503);
    expect(r.body.code).toBe('face_unavailable');
    expect(r.body.detail).toMatch(/nothing was charged/);
    const ref = r.body.reference_id as string;
    expect(ref).toMatch(/^REF-/);
    expect(await verification(ref)).toEqual({ status: 'failed', failure_code: 'face_unavailable', holds_unit: false });
    expect(await ledger(org.orgId)).toEqual([]);
    expect(await wallet(org.orgId)).toEqual({ units: 5, reserved: 0 });
    const again = await requery(org.member.token, ref);
    expect(again.status, again.text).toBe(503);
    expect(again.body).toMatchObject({ code: 'face_unavailable', reference_id: ref });
    // The lookup job run again for this reference (a retry, a stalled worker): decided already.
    const rerun = await runLookup(stack.workers!.deps, ref, createLogger({ level: 'silent' }));
    expect(rerun).toEqual({ outcome: 'failed', code: 'face_unavailable' });
    expect(await ledger(org.orgId)).toEqual([]);
    expect(await wallet(org.orgId)).toEqual({ units: 5, reserved: 0 });
  });

  it('When the face worker does not answer within FACE_WAIT_MS (synchronous), then 503 face_unavailable and nothing charged', async () => {
    t.mode = 'hang';
    try {
      const org = await stack.createOrg({ units: 5 });
      const r = await face(org.member.token, { match_only: true });
      expect(r.status, r.text).toBe(503);
      expect(r.body.code).toBe('face_unavailable');
      expect(await verification(r.body.reference_id)).toMatchObject({ status: 'failed', failure_code: 'face_unavailable' });
      expect(await ledger(org.orgId)).toEqual([]);
      expect(await wallet(org.orgId)).toEqual({ units: 5, reserved: 0 });
    } finally {
      // Its job's second attempt must not hang again (the worker runs one face job at a time).
      t.mode = 'fail';
      releaseHung();
    }
  });

  it('When a failed face match is sent again with its Idempotency-Key and the face worker is back, then the retry is compared and charged FACE_MATCH_UNITS, the failed one nothing', async () => {
    const org = await stack.createOrg({ units: 5 });
    const key = { 'Idempotency-Key': `face-failed-${org.orgId}` };
    const same = { consent: consent() };
    t.mode = 'fail';
    const first = await face(org.member.token, same, key);
    expect(first.status, first.text).toBe(503);
    t.mode = 'ok';
    const second = await face(org.member.token, same, key);
    expect(second.status, second.text).toBe(200);
    expect(second.body.face).toMatchObject({ status: 'compared', match: true });
    const ref = second.body.data.reference_id as string;
    expect(ref).not.toBe(first.body.reference_id);
    expect(await ledger(org.orgId)).toEqual([
      { kind: 'verification', units_delta: -1, reference: ref },
      { kind: 'face_match', units_delta: -1, reference: ref },
    ]);
    expect(await wallet(org.orgId)).toEqual({ units: 3, reserved: 0 });
    // The answer is kept for the key now: a third send replays it, charged once.
    const third = await face(org.member.token, same, key);
    expect(third.status).toBe(200);
    expect(third.headers.get('idempotent-replayed')).toBe('true');
    expect((await ledger(org.orgId)).length).toBe(2);
  });

  it('When the face model fails on an asynchronous face match, then its requery answers 503 face_unavailable, verification.completed says failed, and nothing is charged', async () => {
    t.mode = 'fail';
    const org = await stack.createOrg({ units: 5 });
    const hook = await stack.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url: 'http://127.0.0.1:9/face-failed', events: ['verification.completed'] } });
    expect(hook.status, hook.text).toBe(201);
    const r = await face(org.member.token, {}, { Prefer: 'respond-async' });
    expect(r.status, r.text).toBe(202);
    const ref = r.body.reference_id as string;
    const done = await until(() => requery(org.member.token, ref), (a) => a.status !== 202, 30_000);
    expect(done.status, done.text).toBe(503);
    expect(done.body).toMatchObject({ code: 'face_unavailable', reference_id: ref });
    const events = await stack.db.anyFirst(sql.type(z.object({ body: z.string() }))`SELECT body FROM webhook_events WHERE org_id = ${org.orgId}`);
    expect(events.map((b) => JSON.parse(b).data)).toEqual([{ reference_id: ref, kind: 'face', status: 'failed', code: 'face_unavailable', verdict: 'not_verified', verdict_reasons: ['failed'] }]);
    expect(await ledger(org.orgId)).toEqual([]);
    expect(await wallet(org.orgId)).toEqual({ units: 5, reserved: 0 });
  }, 60_000);

  it('When a synchronous face match\'s lookup job is lost (Redis flushed), then the sweep ends it failed lookup_abandoned and releases its unit, never looking it up again without its selfie', async () => {
    t.mode = 'ok';
    const org = await stack.createOrg({ units: 5 });
    const silent = createLogger({ level: 'silent' });
    const lookups = new Queue(QUEUES.lookups, { connection: { url: inject('redisUrl') }, prefix: queuePrefix(stack.config.REDIS_PREFIX, QUEUES.lookups) });
    // The lookup workers take nothing while paused: the job waits, and is then lost.
    await lookups.pause();
    try {
      const answer = face(org.member.token, {});
      const pendingRef = () => stack.db.maybeOneFirst(sql.type(z.object({ reference_id: z.string() }))`SELECT reference_id FROM verifications WHERE org_id = ${org.orgId} AND status = 'pending'`);
      const ref = (await until(pendingRef, (r) => r !== null, 20_000))!;
      const job = await until(() => lookups.getJob(jobIds.lookup(ref)), (j) => j !== undefined, 10_000);
      expect(job?.data.selfie).toBeDefined();
      await job!.remove();
      await stack.db.query(sql.unsafe`UPDATE verifications SET created_at = now() - interval '10 minutes' WHERE reference_id = ${ref}`);
      const swept = await sweepPending(stack.workers!.deps, silent);
      expect(swept.requeued).toBe(0);
      expect(await lookups.getJob(jobIds.lookup(ref))).toBeUndefined();
      expect(await verification(ref)).toEqual({ status: 'failed', failure_code: 'lookup_abandoned', holds_unit: false });
      expect(await wallet(org.orgId)).toEqual({ units: 5, reserved: 0 });
      // The request's wait ends on the row: the failure, with its reference, nothing charged.
      const r = await answer;
      expect(r.status, r.text).toBe(502);
      expect(r.body).toMatchObject({ reference_id: ref, code: 'lookup_abandoned' });
      expect(await ledger(org.orgId)).toEqual([]);
    } finally {
      await lookups.resume();
      await lookups.close();
    }
  }, 60_000);
});
