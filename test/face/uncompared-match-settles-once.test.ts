import { Queue, QueueEvents } from 'bullmq';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { jobIds, QUEUES, queuePrefix } from '../../src/jobs/catalog.ts';
import { sql } from 'slonik';
import { z } from 'zod';
import { createLogger } from '../../src/lib/logger.ts';
import { sweepPending } from '../../src/modules/verification/index.ts';
import { startFaceWorker, type RunningFaceWorker } from '../../workers/face.ts';
import { startStack, type Stack } from '../setup/harness.ts';
import { faceConsent, faceMatchReads, HOPPER_NIN, HOPPER_SELFIE, testFaceEngine } from '../setup/face-match.ts';
import { waitFor } from '../setup/wait.ts';

/**
 * A face match whose comparison cannot be made (its face job failing past its attempts, or the API's
 * wait running out) ends failed `face_unavailable`: the unit released, nothing charged, exactly once,
 * although the face worker's last attempt, the API's wait and a later run of the comparison all try.
 *
 * The face worker runs in this process with an engine of the test's own (test/setup/face-match.ts).
 */
let stack: Stack;
let faceWorker: RunningFaceWorker | null = null;
const t = testFaceEngine();
let faces: Queue;
let faceEvents: QueueEvents;
const ended = new Map<string, string>();
const silent = createLogger({ level: 'silent' });

beforeAll(async () => {
  stack = await startStack({ env: { FACE_WAIT_MS: '3000', VERIFY_WAIT_MS: '3000', FACE_NICE: '0' } });
  faceWorker = await startFaceWorker(stack.config, silent, { engine: t.engine });
  const connection = { url: inject('redisUrl') };
  const prefix = queuePrefix(stack.config.REDIS_PREFIX, QUEUES.face);
  faces = new Queue(QUEUES.face, { connection, prefix });
  faceEvents = new QueueEvents(QUEUES.face, { connection, prefix });
  faceEvents.on('completed', ({ jobId }) => ended.set(jobId, 'completed'));
  faceEvents.on('failed', ({ jobId }) => ended.set(jobId, 'failed'));
  await faceEvents.waitUntilReady();
}, 60_000);
afterAll(async () => {
  t.releaseHung();
  await faceEvents?.close();
  await faces?.close();
  await faceWorker?.close();
  await stack?.close();
});

const { ledger, wallet, verification } = faceMatchReads(() => stack.db);
const face = (token: string) => stack.api('POST', '/v1/verify-nin/face', { token, json: { nin: HOPPER_NIN, reason: 'corporate', selfie: HOPPER_SELFIE, consent: faceConsent() } });
/** The 503 a face match that was not compared answers: its reference. */
const unavailable = (r: { status: number; text: string; body: { code?: string; reference_id?: string } }): string => {
  expect(r.status, r.text).toBe(503);
  expect(r.body.code).toBe('face_unavailable');
  return r.body.reference_id as string;
};
const nothingCharged = async (orgId: number, ref: string) => {
  expect(await verification(ref)).toEqual({ status: 'failed', failure_code: 'face_unavailable', holds_unit: false });
  expect(await ledger(orgId)).toEqual([]);
  expect(await wallet(orgId)).toEqual({ units: 5, reserved: 0 });
};

describe('a comparison that cannot be made settles once', () => {
  it('When the face worker fails the comparison past its attempts, then the face worker and the API both end it and it is failed face_unavailable once: 503, the unit released, nothing charged', async () => {
    t.mode = 'fail';
    t.referencesAsked = 0;
    const org = await stack.createOrg({ units: 5 });
    const r = await face(org.member.token);
    const ref = unavailable(r);
    // The API answered on the job's last failure, which the face worker had settled first.
    expect(ended.get(jobIds.faceCompare(ref))).toBe('failed');
    expect(t.referencesAsked).toBe(2);
    await nothingCharged(org.orgId, ref);
  });

  it('When the API\'s wait runs out while the comparison runs, then 503 face_unavailable; the comparison, released later and run again, finds it decided and charges nothing', async () => {
    t.mode = 'hang';
    const org = await stack.createOrg({ units: 5 });
    const r = await face(org.member.token);
    const ref = unavailable(r);
    await nothingCharged(org.orgId, ref);
    // Its first attempt fails once released; the second reads the row, decided, and completes.
    t.mode = 'ok';
    t.releaseHung();
    await waitFor(() => ended.get(jobIds.faceCompare(ref)), { what: 'the comparison job to end', timeoutMs: 20_000 });
    expect(ended.get(jobIds.faceCompare(ref))).toBe('completed');
    await nothingCharged(org.orgId, ref);
  });

  it('When no face worker takes the comparison before the API\'s wait runs out, then its job is taken off the queue unrun and the match is failed face_unavailable, nothing charged', async () => {
    t.mode = 'ok';
    t.referencesAsked = 0;
    const org = await stack.createOrg({ units: 5 });
    const stopped = t.stopAfterNextSelfie(faceWorker!);
    try {
      const r = await face(org.member.token);
      const ref = unavailable(r);
      await stopped;
      expect(await faces.getJob(jobIds.faceCompare(ref))).toBeUndefined();
      expect(ended.has(jobIds.faceCompare(ref))).toBe(false);
      await nothingCharged(org.orgId, ref);
    } finally {
      faceWorker = await startFaceWorker(stack.config, silent, { engine: t.engine });
    }
    expect(t.referencesAsked).toBe(0);
  });

  it('When a face worker reaches a synchronous comparison after FACE_WAIT_MS from its hand-over, then it compares nothing and ends it failed face_unavailable: 503, nothing charged', async () => {
    t.mode = 'ok';
    t.referencesAsked = 0;
    const org = await stack.createOrg({ units: 5 });
    const stopped = t.stopAfterNextSelfie(faceWorker!);
    let answer: Promise<Awaited<ReturnType<typeof face>>> | undefined;
    try {
      answer = face(org.member.token);
      await stopped;
      const compare = await waitFor(async () => (await faces.getJobs(['prioritized', 'waiting'])).find((j) => j.name === 'face.compare'), { what: 'the comparison handed over', timeoutMs: 30_000 });
      // Its time is up (as if no face worker had come for FACE_WAIT_MS): moved into the past, not waited for.
      const data = compare.data as { settle: { notAfter?: number } };
      expect(data.settle.notAfter).toBeGreaterThan(compare.timestamp);
      await compare.updateData({ ...compare.data, settle: { ...data.settle, notAfter: Date.now() - 1 } });
    } finally {
      faceWorker = await startFaceWorker(stack.config, silent, { engine: t.engine });
    }
    const r = await answer!;
    const ref = unavailable(r);
    // The face worker ran the job (not taken off the queue by the API) and asked the engine nothing.
    expect(ended.get(jobIds.faceCompare(ref))).toBe('completed');
    expect(t.referencesAsked).toBe(0);
    await nothingCharged(org.orgId, ref);
  }, 60_000);

  it('When an asynchronous face match\'s comparison waits for a face worker over an hour, then the sweep takes it off the queue and ends the match failed face_unavailable, its end reported, nothing charged', async () => {
    t.mode = 'ok';
    const org = await stack.createOrg({ units: 5 });
    const hook = await stack.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url: 'http://127.0.0.1:9/face-swept', events: ['verification.completed'] } });
    expect(hook.status, hook.text).toBe(201);
    const stopped = t.stopAfterNextSelfie(faceWorker!);
    try {
      const r = await stack.api('POST', '/v1/verify-nin/face', { token: org.member.token, json: { nin: HOPPER_NIN, reason: 'corporate', selfie: HOPPER_SELFIE, consent: faceConsent() }, headers: { Prefer: 'respond-async' } });
      expect(r.status, r.text).toBe(202);
      const ref = r.body.reference_id as string;
      await stopped;
      const compare = await waitFor(() => faces.getJob(jobIds.faceCompare(ref)), { what: 'the comparison handed over', timeoutMs: 30_000 });
      // The lookup job completed after handing it over (removed as it ended).
      const lookups = stack.workers!.deps.producer.queue(QUEUES.lookups);
      await waitFor(async () => (await lookups.getJob(jobIds.lookup(ref))) === undefined, { what: 'the lookup job to end' });
      // The sweep an hour and a bit later (on its own clock): the lookup is gone, its comparison still waits.
      const later = { ...stack.workers!.deps, clock: { now: () => new Date(compare.timestamp + 61 * 60_000) } };
      expect(await sweepPending(later, silent)).toEqual({ requeued: 0, released: 1 });
      expect(await faces.getJob(jobIds.faceCompare(ref))).toBeUndefined();
      await nothingCharged(org.orgId, ref);
      const events = await stack.db.anyFirst(sql.type(z.object({ body: z.string() }))`SELECT body FROM webhook_events WHERE org_id = ${org.orgId}`);
      expect(events.map((b) => JSON.parse(b).data)).toMatchObject([{ reference_id: ref, kind: 'face', status: 'failed', code: 'face_unavailable' }]);
    } finally {
      faceWorker = await startFaceWorker(stack.config, silent, { engine: t.engine });
    }
  }, 60_000);
});
