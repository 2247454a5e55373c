import { Queue } from 'bullmq';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { QUEUES, queuePrefix } from '../../src/jobs/catalog.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { createFaceEngine } from '../../src/modules/face/index.ts';
import type { FrameEngine } from '../../src/modules/face/engine.ts';
import { startFaceWorker, type RunningFaceWorker } from '../../workers/face.ts';
import { startStack, type ApiResponse, type OrgFixture, type Stack } from '../setup/harness.ts';
import { livenessSequence, type Challenge } from '../setup/liveness.ts';
import { waitFor } from '../setup/wait.ts';

/**
 * FACE_ORG_MAX_IN_FLIGHT bounds an organisation's face matches with a liveness check as it bounds those
 * with a selfie. No face worker runs until the test has queued what it needs, so what was sent first
 * stays in flight (queued) by construction; then a face worker in this process, with the real model,
 * judges and compares what is left.
 */
const CAP = 1;
const HOPPER_NIN = '70000000001';

const ledgerRow = z.object({ kind: z.string(), units_delta: z.coerce.number(), reference: z.string().nullable() });
const consent = () => ({ obtained_at: new Date().toISOString(), channel: 'mobile', notice_version: 'privacy-2026-03' });

let stack: Stack;
let engine: FrameEngine;
let faces: Queue;
let worker: RunningFaceWorker | undefined;

beforeAll(async () => {
  // FACE_WAIT_MS long enough for a job queued before the face worker starts (its model loaded already).
  stack = await startStack({ env: { FACE_ORG_MAX_IN_FLIGHT: String(CAP), FACE_WAIT_MS: '30000', FACE_NICE: '0' } });
  engine = await createFaceEngine();
  faces = new Queue(QUEUES.face, { connection: { url: inject('redisUrl') }, prefix: queuePrefix(stack.config.REDIS_PREFIX, QUEUES.face) });
}, 60_000);
afterAll(async () => {
  await faces?.close();
  await worker?.close();
  await stack?.close();
});

/** Face jobs queued or running, liveness judgements included. */
const faceJobs = async () => {
  const c = await faces.getJobCounts('prioritized', 'waiting', 'active');
  return (c.prioritized ?? 0) + (c.waiting ?? 0) + (c.active ?? 0);
};
const ledger = (orgId: number) => stack.db.any(sql.type(ledgerRow)`SELECT kind, units_delta, reference FROM wallet_transactions WHERE org_id = ${orgId} AND kind <> 'adjustment' ORDER BY id`);
const newSession = async (org: OrgFixture): Promise<{ id: string; challenges: Challenge[] }> => {
  const r = await stack.api('POST', '/v1/liveness/sessions', { token: org.member.token });
  expect(r.status, r.text).toBe(201);
  return r.body;
};
const sessionStatus = async (org: OrgFixture, id: string) => (await stack.api('GET', `/v1/liveness/sessions/${id}`, { token: org.member.token })).body.status;
/** A face match with a liveness check of `session` (frames of its own bytes each time), not awaited. */
const send = (org: OrgFixture, session: { id: string; challenges: Challenge[] }): Promise<ApiResponse> => {
  const answer = stack.api('POST', '/v1/verify-nin/face', {
    token: org.member.token,
    json: { nin: HOPPER_NIN, reason: 'corporate', consent: consent(), liveness: { session_id: session.id, frames: livenessSequence(session.challenges) } },
  });
  // A request still waiting when a failed assertion ends the test is cut by the stack's close: that
  // is no second failure (the rejection still reaches whoever awaits it).
  answer.catch(() => undefined);
  return answer;
};

describe('face jobs in flight per organisation, liveness checks', () => {
  it("When an organisation has FACE_ORG_MAX_IN_FLIGHT liveness checks in flight, then its next one is refused 429 face_in_flight_cap with nothing charged and its session still open, while another organisation's gets through", async () => {
    const a = await stack.createOrg({ units: 10 });
    const b = await stack.createOrg({ units: 10 });
    const [first, beyond, theirs] = [await newSession(a), await newSession(a), await newSession(b)];

    const firstAnswer = send(a, first);
    await waitFor(async () => (await faceJobs()) === CAP, { what: "the first liveness check's job in the face queue" });
    const beyondAnswer = send(a, beyond);
    let answered = false;
    void beyondAnswer.then(
      () => (answered = true),
      () => (answered = true),
    );
    // Either it is answered (refused at once, as a selfie check would be) or it joins the queue.
    await waitFor(async () => answered || (await faceJobs()) > CAP, { what: 'the check beyond the cap answered or queued' });
    expect(await faceJobs(), 'the check beyond the cap was queued instead of refused').toBe(CAP);
    const refused = await beyondAnswer;
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body).toMatchObject({ code: 'face_in_flight_cap', detail: expect.stringMatching(/nothing was charged/) });
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await sessionStatus(a, beyond.id)).toBe('open');

    // Another organisation is not held by the first one's cap: its check is queued.
    const theirAnswer = send(b, theirs);
    await waitFor(async () => (await faceJobs()) === CAP + 1, { what: "the other organisation's liveness check in the face queue" });
    worker = await startFaceWorker(stack.config, createLogger({ level: 'silent' }), { engine });
    const [ours, other] = await Promise.all([firstAnswer, theirAnswer]);
    for (const r of [ours, other]) {
      expect(r.status, r.text).toBe(200);
      expect(r.body.face).toMatchObject({ status: 'compared', liveness: 'passed' });
    }
    // Nothing charged for the refused one: the first's two lines alone (FACE_MATCH_UNITS + LIVENESS_UNITS).
    const ref = ours.body.data.reference_id as string;
    expect(await ledger(a.orgId)).toEqual([
      { kind: 'verification', units_delta: -1, reference: ref },
      { kind: 'face_match', units_delta: -2, reference: ref },
    ]);
    // The refused session was not spent: with nothing in flight any more, it is judged and passes.
    const again = await send(a, beyond);
    expect(again.status, again.text).toBe(200);
    expect(await sessionStatus(a, beyond.id)).toBe('used');
  }, 120_000);
});
