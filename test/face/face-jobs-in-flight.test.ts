import { readFileSync } from 'node:fs';
import { Queue } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { QUEUES, queuePrefix } from '../../src/jobs/catalog.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { startFaceWorker, type RunningFaceWorker } from '../../workers/face.ts';
import { holdingFaceEngine } from '../setup/face-match.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { until, waitFor } from '../setup/wait.ts';

/**
 * Face jobs in flight per organisation, and face jobs nobody waits for. The face worker runs in this
 * process with an engine of the test's own (no model): while `holding`, every selfie it is given waits
 * until the test lets it go, so the one face slot (FACE_CONCURRENCY 1) stays taken as long as the test
 * needs; otherwise it accepts every selfie and every comparison matches.
 */
const selfie = readFileSync('src/simulators/identity-authority/faces/grace-hopper.selfie.jpg').toString('base64');
const FIXTURE_NIN = '12345678903';
const consent = () => ({ obtained_at: new Date().toISOString(), channel: 'mobile', notice_version: 'v1' });
const CAP = 2;
const FACE_WAIT_MS = 8000;

const engine = holdingFaceEngine();

let stack: Stack;
let worker: RunningFaceWorker;
let faces: Queue;

beforeAll(async () => {
  stack = await startStack({ env: { FACE_ORG_MAX_IN_FLIGHT: String(CAP), FACE_WAIT_MS: String(FACE_WAIT_MS), FACE_NICE: '0'} });
  worker = await startFaceWorker(stack.config, createLogger({ level: 'silent' }), { engine: engine.engine });
  faces = new Queue(QUEUES.face, { connection: { url: inject('redisUrl') }, prefix: queuePrefix(stack.config.REDIS_PREFIX, QUEUES.face) });
}, 60_000);
afterEach(async () => {
  engine.letGo();
  // Each test starts with an empty face queue.
  await waitFor(async () => (await counts()).total === 0, { what: 'the face queue to drain', timeoutMs: 30_000 });
});
afterAll(async () => {
  engine.letGo();
  await faces?.close();
  await worker?.close();
  await stack?.close();
});

const counts = async () => {
  const c = await faces.getJobCounts('prioritized', 'waiting', 'active');
  const queued = (c.prioritized ?? 0) + (c.waiting ?? 0);
  return { queued, active: c.active ?? 0, total: queued + (c.active ?? 0) };
};
const faceBody = () => ({ nin: FIXTURE_NIN, reason: 'corporate', consent: consent(), selfie });
const face = (org: OrgFixture) => stack.api('POST', '/v1/verify-nin/face', { token: org.member.token, json: faceBody() });
/** One organisation's selfie check taking the face slot, held there until engine.letGo(); its answer once it ends. */
async function holdTheSlot(org: OrgFixture) {
  engine.holding = true;
  const answer = face(org);
  await waitFor(() => engine.held === 1, { what: 'the first selfie check to run' });
  // Wrapped: an async function returning the promise itself would wait for the answer.
  return { answer };
}

describe('face jobs in flight per organisation', () => {
  it('When an organisation has FACE_ORG_MAX_IN_FLIGHT face matches queued or running, then its next one is refused 429 face_in_flight_cap at once, another organisation\'s is queued, and all the others are answered once the slot frees', async () => {
    const a = await stack.createOrg();
    const b = await stack.createOrg();
    const { answer: first } = await holdTheSlot(a);
    const second = face(a);
    await waitFor(async () => (await counts()).total === CAP, { what: `${CAP} face jobs of one organisation in the queue` });
    const refused = await face(a);
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body).toMatchObject({ code: 'face_in_flight_cap', detail: expect.stringMatching(/nothing was charged/) });
    expect(refused.headers.get('retry-after')).toBe('5');
    // Another organisation is not held by the first one's cap.
    const other = face(b);
    await waitFor(async () => (await counts()).total === CAP + 1, { what: 'the other organisation\'s face job in the queue' });
    engine.letGo();
    expect((await Promise.all([first, second, other])).map((r) => r.status)).toEqual([200, 200, 200]);
    // The cap counts what is in flight: with nothing left, the organisation is let in again.
    expect((await face(a)).status).toBe(200);
  });
});

describe('face jobs nobody waits for', () => {
  it('When the API\'s wait for a queued selfie check runs out, then 503 face_timeout and the job is no longer in the queue: it never runs', async () => {
    const a = await stack.createOrg();
    const b = await stack.createOrg();
    const { answer: first } = await holdTheSlot(a);
    const seen = engine.selfiesSeen;
    const late = await face(b);
    expect(late.status, late.text).toBe(503);
    expect(late.body.code).toBe('face_timeout');
    // Answered after its job was taken off the queue: only the held one is left.
    expect(await counts()).toEqual({ queued: 0, active: 1, total: 1 });
    engine.letGo();
    expect((await first).status).toBe(503);
    expect(engine.selfiesSeen).toBe(seen);
  });

  it('When the caller goes away while its selfie check is queued, then the job leaves the queue before the wait would have run out, and never runs', async () => {
    const a = await stack.createOrg();
    const b = await stack.createOrg();
    const { answer: first } = await holdTheSlot(a);
    const seen = engine.selfiesSeen;
    const gone = new AbortController();
    const sent = fetch(`${stack.url}/v1/verify-nin/face`, { method: 'POST', headers: { authorization: `Bearer ${b.member.token}`, 'content-type': 'application/json' }, body: JSON.stringify(faceBody()), signal: gone.signal }).catch(() => 'aborted');
    await waitFor(async () => (await counts()).queued === 1, { what: 'the second organisation\'s selfie check in the queue' });
    const abortedAt = Date.now();
    gone.abort();
    expect(await sent).toBe('aborted');
    const left = await until(counts, (c) => c.queued === 0, FACE_WAIT_MS);
    expect(left.queued).toBe(0);
    // Dropped because the caller went, not because the API's own wait ran out.
    expect(Date.now() - abortedAt).toBeLessThan(FACE_WAIT_MS / 2);
    engine.letGo();
    expect((await first).status).toBe(200);
    // The held match's one job (a found fixture's comparison, its check too) ended; the dropped check never ran.
    expect(engine.selfiesSeen).toBe(seen);
  });
});
