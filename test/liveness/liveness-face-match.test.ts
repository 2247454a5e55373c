import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { QueueEvents } from 'bullmq';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { jobIds, QUEUES, queuePrefix } from '../../src/jobs/catalog.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { livenessFrame, livenessSequence, type Challenge, type Frame } from '../setup/liveness.ts';
import { until, waitFor } from '../setup/wait.ts';

/**
 * POST /v1/verify-nin/face with `liveness` instead of a selfie, through the API, a face worker and
 * the identity simulator, on the sandbox's synthetic frames: a head turned in the session's order
 * passes and is charged the face match's units plus LIVENESS_UNITS; every failed check, and every
 * session that cannot be judged, gets its answer with nothing looked up or charged.
 */
const HOPPER_NIN = '70000000001';
const FIXTURE_NIN = '12345678903';
const ledgerRow = z.object({ kind: z.string(), units_delta: z.coerce.number(), reference: z.string().nullable() });
const walletRow = z.object({ units: z.coerce.number(), reserved: z.coerce.number() });
const consent = () => ({ obtained_at: new Date().toISOString(), channel: 'mobile', notice_version: 'privacy-2026-03' });

let stack: Stack;
const ledger = (orgId: number) => stack.db.any(sql.type(ledgerRow)`SELECT kind, units_delta, reference FROM wallet_transactions WHERE org_id = ${orgId} AND kind <> 'adjustment' ORDER BY id`);
const wallet = (orgId: number) => stack.db.one(sql.type(walletRow)`SELECT units, reserved FROM wallets WHERE org_id = ${orgId}`);
const verificationCount = (orgId: number) => stack.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM verifications WHERE org_id = ${orgId}`);
const newSession = async (org: OrgFixture): Promise<{ id: string; challenges: Challenge[] }> => {
  const r = await stack.api('POST', '/v1/liveness/sessions', { token: org.member.token });
  expect(r.status, r.text).toBe(201);
  return r.body;
};
const sessionStatus = async (org: OrgFixture, id: string) => (await stack.api('GET', `/v1/liveness/sessions/${id}`, { token: org.member.token })).body.status;
const face = (org: OrgFixture, body: Record<string, unknown>, headers?: Record<string, string>) =>
  stack.api('POST', '/v1/verify-nin/face', { token: org.member.token, json: { nin: HOPPER_NIN, reason: 'corporate', consent: consent(), ...body }, ...(headers ? { headers } : {}) });

// The face jobs added, in the queue's order (its event stream): which trips a face match makes.
const faceJobsAdded: string[] = [];
let faceEvents: QueueEvents;

beforeAll(async () => {
  stack = await startStack({ face: true });
  faceEvents = new QueueEvents(QUEUES.face, { connection: { url: inject('redisUrl') }, prefix: queuePrefix(stack.config.REDIS_PREFIX, QUEUES.face) });
  faceEvents.on('added', ({ jobId }) => faceJobsAdded.push(jobId));
  await faceEvents.waitUntilReady();
  // The first verification may fetch the authority's reasons list: done now, so the tests count lookups only.
  const warm = await stack.createOrg();
  await stack.api('POST', '/v1/verify-nin', { token: warm.member.token, json: { nin: '12345678901', reason: 'corporate' } });
}, 60_000);
afterAll(async () => {
  await faceEvents?.close();
  await stack?.close();
});

describe('a face match with a liveness check', () => {
  it('When a head turns in the session order, then it passes in one face job (the front frame checked as the selfie there), the face matches, the session is used, face + liveness units are charged, and the requery and subject export show the check', async () => {
    const org = await stack.createOrg({ units: 10 });
    const s = await newSession(org);
    const r = await face(org, { liveness: { session_id: s.id, frames: livenessSequence(s.challenges) } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.face).toMatchObject({ status: 'compared', match: true, liveness: 'passed' });
    expect(r.body.face.liveness_check).toMatchObject({ session_id: s.id, challenges: s.challenges, model: expect.stringMatching(/face-api/) });
    expect(r.body.face.liveness_check.steps.map((x: { step: string; passed: boolean }) => [x.step, x.passed])).toEqual([['front', true], ...s.challenges.map((c) => [c, true])]);
    expect(r.body.face.liveness_check.checks).toContain('flat_image');
    expect(r.body.verdict).toBe('verified');
    const ref = r.body.data.reference_id as string;
    // FACE_MATCH_UNITS (2: the lookup's unit and the face_match line) + LIVENESS_UNITS (1, on the face_match line).
    expect(await ledger(org.orgId)).toEqual([
      { kind: 'verification', units_delta: -1, reference: ref },
      { kind: 'face_match', units_delta: -2, reference: ref },
    ]);
    expect(await wallet(org.orgId)).toEqual({ units: 7, reserved: 0 });
    expect(await sessionStatus(org, s.id)).toBe('used');
    // One face trip before the lookup: the judging (which checked the front frame as the selfie), then
    // the comparison; no separate selfie check (seen once the comparison's addition is, in stream order).
    await waitFor(() => faceJobsAdded.includes(jobIds.faceCompare(ref)), { what: 'the comparison job added' });
    expect(faceJobsAdded.filter((id) => id.startsWith(`liveness-judge-${s.id}-`) || id.endsWith(ref))).toEqual([expect.stringMatching(`^liveness-judge-${s.id}-`), jobIds.faceCompare(ref)]);
    // The requery answers the same face, liveness check included (kept sealed with the comparison).
    const again = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } });
    expect(again.status, again.text).toBe(200);
    expect(again.body.face).toEqual(r.body.face);
    // The subject export lists the face result as answered, liveness check included.
    const env = { ...process.env, DATABASE_URL: stack.config.DATABASE_URL, SUBJECT_HASH_KEY: stack.config.SUBJECT_HASH_KEY, LOG_LEVEL: 'silent' };
    const exported = await promisify(execFile)(process.execPath, ['src/cli/admin.ts', 'subject:export', '--nin', HOPPER_NIN, '--org', String(org.orgId)], { env });
    const listed = JSON.parse(exported.stdout.trim().split('\n').at(-1)!).verifications as { reference_id: string; face: unknown }[];
    expect(listed.find((v) => v.reference_id === ref)?.face).toEqual(r.body.face);
    // The same session again: 409, nothing more looked up or charged.
    const calls = stack.identitySim.stats().calls;
    const used = await face(org, { liveness: { session_id: s.id, frames: livenessSequence(s.challenges) } });
    expect(used.status, used.text).toBe(409);
    expect(used.body.code).toBe('liveness_session_used');
    expect(stack.identitySim.stats().calls).toBe(calls);
    expect(await wallet(org.orgId)).toEqual({ units: 7, reserved: 0 });
  }, 120_000);

  it('When two requests send one session at once, then one is judged and answered, the other 409 liveness_session_used', async () => {
    const org = await stack.createOrg({ units: 0 });
    const s = await newSession(org);
    const both = await Promise.all([0, 1].map(() => face(org, { nin: FIXTURE_NIN, liveness: { session_id: s.id, frames: livenessSequence(s.challenges) } })));
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(both.find((r) => r.status === 409)!.body.code).toBe('liveness_session_used');
    expect(await sessionStatus(org, s.id)).toBe('used');
  }, 120_000);

  it('When a fixture NIN is asked with a passed check, then it answers liveness passed for nothing, asynchronously too', async () => {
    const org = await stack.createOrg({ units: 0 });
    const s = await newSession(org);
    const r = await face(org, { nin: FIXTURE_NIN, liveness: { session_id: s.id, frames: livenessSequence(s.challenges, { person: 'grace-hopper' }) } }, { Prefer: 'respond-async' });
    expect(r.status, r.text).toBe(202);
    const got = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: r.body.reference_id } });
    expect(got.status, got.text).toBe(200);
    expect(got.body.face).toMatchObject({ match: true, liveness: 'passed', liveness_check: { session_id: s.id } });
    expect(await ledger(org.orgId)).toEqual([{ kind: 'fixture_verification', units_delta: 0, reference: r.body.reference_id }]);
  }, 120_000);

  it('When a passed check is sent with Prefer: respond-async and an Idempotency-Key, then the job charges face + liveness units and the key replays it', async () => {
    const org = await stack.createOrg({ units: 10 });
    const s = await newSession(org);
    // One consent statement, so that the replay is the same request.
    const body = { consent: consent(), liveness: { session_id: s.id, frames: livenessSequence(s.challenges) } };
    const headers = { Prefer: 'respond-async', 'Idempotency-Key': `lv-${randomBytes(6).toString('hex')}` };
    const accepted = await face(org, body, headers);
    expect(accepted.status, accepted.text).toBe(202);
    const ref = accepted.body.reference_id as string;
    const requery = () => stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } });
    const done = await until(requery, (r) => r.status !== 202, 60_000);
    expect(done.status, done.text).toBe(200);
    expect(done.body.face).toMatchObject({ match: true, liveness: 'passed', liveness_check: { session_id: s.id } });
    expect(await ledger(org.orgId)).toEqual([
      { kind: 'verification', units_delta: -1, reference: ref },
      { kind: 'face_match', units_delta: -2, reference: ref },
    ]);
    // The same key and frames: the verification again (the session is not judged twice); other frames: 409.
    const replay = await face(org, body, headers);
    expect(replay.status, replay.text).toBe(200);
    expect(replay.body.face).toEqual(done.body.face);
    const other = await face(org, { consent: body.consent, liveness: { session_id: s.id, frames: livenessSequence(s.challenges) } }, headers);
    expect(other.status, other.text).toBe(409);
    expect(await wallet(org.orgId)).toEqual({ units: 7, reserved: 0 });
  }, 120_000);

  const failures: [string, (challenges: Challenge[]) => Frame[], string[]][] = [
    ['the same frames come in another order than the session gave', (c) => livenessSequence([c[1]!, c[2]!, c[0]!]), ['pose_not_reached']],
    ['every frame is the front picture again (stills)', (c) => livenessSequence(c, { kind: 'still' }), ['pose_not_reached', 'still_image']],
    ['the turns are a flat picture turned by a homography', (c) => livenessSequence(c, { kind: 'flat' }), ['pose_not_reached', 'flat_image']],
    ["the turns are another person's", (c) => livenessSequence(c, { turnsOf: 'eileen-collins' }), ['face_changed']],
    ['the sequence is too fast (steps 50 ms apart)', (c) => livenessSequence(c, { gapMs: 50 }), ['timing']],
  ];
  for (const [what, frames, reasons] of failures) {
    it(`When ${what}, then 422 liveness_failed names it, nothing is looked up or charged and the session is failed`, async () => {
      const org = await stack.createOrg({ units: 10 });
      const s = await newSession(org);
      const calls = stack.identitySim.stats().calls;
      const r = await face(org, { liveness: { session_id: s.id, frames: frames(s.challenges) } });
      expect(r.status, r.text).toBe(422);
      expect(r.body).toMatchObject({ code: 'liveness_failed', liveness: { status: 'failed' } });
      expect(r.body.detail).toMatch(/liveness check failed/);
      expect(r.body.liveness.reasons).toEqual(expect.arrayContaining(reasons));
      if (reasons.length === 1) expect(r.body.liveness.reasons).toEqual(reasons);
      expect(r.body.liveness.steps.map((x: { step: string }) => x.step)).toEqual(['front', ...s.challenges]);
      expect(stack.identitySim.stats().calls).toBe(calls);
      expect(await verificationCount(org.orgId)).toBe(0);
      expect(await ledger(org.orgId)).toEqual([]);
      expect(await wallet(org.orgId)).toEqual({ units: 10, reserved: 0 });
      expect(await sessionStatus(org, s.id)).toBe('failed');
    }, 120_000);
  }

  it('When frames already sent (by another organisation) come again, then frames_reused, nothing charged', async () => {
    // One set of frame bytes, laid out in each session's order.
    const images = new Map<string, string>();
    const image = (name: string) => images.get(name) ?? (images.set(name, livenessFrame('grace-hopper', name)), images.get(name)!);
    const laidOut = (challenges: readonly Challenge[]): Frame[] => [
      { step: 'front', image: image('front'), captured_at_ms: 1000 },
      ...challenges.flatMap((c, i) => [`${c}-mid`, c].map((name, j) => ({ step: c, image: image(name), captured_at_ms: 1400 + (2 * i + j) * 400 }))),
    ];
    const first = await stack.createOrg({ units: 0 });
    const s1 = await newSession(first);
    expect((await face(first, { nin: FIXTURE_NIN, liveness: { session_id: s1.id, frames: laidOut(s1.challenges) } })).status).toBe(200);
    const org = await stack.createOrg({ units: 10 });
    const s = await newSession(org);
    const calls = stack.identitySim.stats().calls;
    const r = await face(org, { liveness: { session_id: s.id, frames: laidOut(s.challenges) } });
    expect(r.status, r.text).toBe(422);
    expect(r.body.liveness.reasons).toEqual(['frames_reused']);
    expect(stack.identitySim.stats().calls).toBe(calls);
    expect(await ledger(org.orgId)).toEqual([]);
    expect(await sessionStatus(org, s.id)).toBe('failed');
  }, 120_000);

  it("When the session expired, or is another organisation's, then 410 and 404 before anything is judged; nothing charged", async () => {
    const org = await stack.createOrg({ units: 10 });
    const other = await stack.createOrg({ units: 10 });
    const expired = await newSession(org);
    await stack.db.query(sql.unsafe`UPDATE liveness_sessions SET expires_at = now() - interval '1 second', created_at = now() - interval '1 minute' WHERE id = ${expired.id}`);
    const theirs = await newSession(other);
    const calls = stack.identitySim.stats().calls;
    const gone = await face(org, { liveness: { session_id: expired.id, frames: livenessSequence(expired.challenges) } });
    expect(gone.status, gone.text).toBe(410);
    expect(gone.body.code).toBe('liveness_session_expired');
    const notOurs = await face(org, { liveness: { session_id: theirs.id, frames: livenessSequence(theirs.challenges) } });
    expect(notOurs.status, notOurs.text).toBe(404);
    expect(notOurs.body.code).toBe('liveness_session_not_found');
    expect(await sessionStatus(other, theirs.id)).toBe('open');
    expect(stack.identitySim.stats().calls).toBe(calls);
    expect(await ledger(org.orgId)).toEqual([]);
    expect(await verificationCount(org.orgId)).toBe(0);
  }, 60_000);

  it('When selfie and liveness are both sent, or neither, or the frames are malformed, then 400; a body over 10 MiB is 413', async () => {
    const org = await stack.createOrg({ units: 10 });
    const s = await newSession(org);
    const frames = livenessSequence(s.challenges);
    const both = await face(org, { selfie: frames[0]!.image, liveness: { session_id: s.id, frames } });
    expect(both.status, both.text).toBe(400);
    expect(both.body.detail).toBe('Send exactly one of selfie and liveness');
    expect((await face(org, {})).status).toBe(400);
    const missingStep = await face(org, { liveness: { session_id: s.id, frames: frames.filter((f) => f.step !== 'look_up') } });
    expect(missingStep.status, missingStep.text).toBe(400);
    expect(missingStep.body.detail).toMatch(/look_up has 0/);
    const fourFronts = await face(org, { liveness: { session_id: s.id, frames: [frames[0]!, frames[0]!, frames[0]!, ...frames] } });
    expect(fourFronts.status, fourFronts.text).toBe(400);
    expect(fourFronts.body.detail).toMatch(/front has 4/);
    const thirteen = await face(org, { liveness: { session_id: s.id, frames: [...frames, ...frames].slice(0, 13) } });
    expect(thirteen.status, thirteen.text).toBe(400);
    const notBase64 = await face(org, { liveness: { session_id: s.id, frames: frames.map((f, i) => (i === 2 ? { ...f, image: '%%%' } : f)) } });
    expect(notBase64.status).toBe(400);
    expect(notBase64.body.detail).toMatch(/^liveness\.frames\[2\]\.image/);
    const gif = await face(org, { liveness: { session_id: s.id, frames: frames.map((f, i) => (i === 1 ? { ...f, image: Buffer.from('GIF89a-not-a-frame').toString('base64') } : f)) } });
    expect(gif.status).toBe(422);
    expect(gif.body.code).toBe('selfie_unreadable');
    expect((await face(org, { liveness: { session_id: s.id, frames: frames.map((f) => ({ ...f, captured_at_ms: -1 })) } })).status).toBe(400);
    const big = await face(org, { liveness: { session_id: s.id, frames: [...frames, { step: 'front', image: 'A'.repeat(10 * 1024 * 1024), captured_at_ms: 0 }] } });
    expect(big.status).toBe(413);
    // None of these spent the session.
    expect(await sessionStatus(org, s.id)).toBe('open');
    expect(await ledger(org.orgId)).toEqual([]);
  }, 60_000);
});
