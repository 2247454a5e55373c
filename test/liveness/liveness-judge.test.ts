import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { sql } from 'slonik';
import { beforeAll, describe, expect, it } from 'vitest';
import { createFaceEngine } from '../../src/modules/face/index.ts';
import type { FrameEngine } from '../../src/modules/face/engine.ts';
import { seal } from '../../src/lib/crypto.ts';
import { frameHashKey, frameHashStore, framesReused } from '../../src/modules/liveness/frame-hashes.ts';
import { judgeLiveness, withReuse, type JudgeDeps, type LivenessFrame } from '../../src/modules/liveness/judge.ts';
import { livenessAad, runLivenessJudgement } from '../../src/modules/liveness/liveness.job.ts';
import type { Challenge } from '../../src/modules/liveness/liveness.schemas.ts';
import { useTestPool } from '../setup/harness.ts';

/**
 * The judging engine on the sandbox's synthetic frames (scripts/liveness-frames.ts): a head turned
 * in the session's order passes; the same frames in another order, stills, a flat picture turned, a
 * sequence whose turns are another person, reused frames and a too-fast sequence each fail with their
 * reason. The face model runs for real; each image is analysed once (memoised by its bytes).
 */
const DIR = join(import.meta.dirname, '../../src/simulators/identity-authority/faces/liveness');
const frame = (person: string, name: string) => readFileSync(join(DIR, person, `${name}.jpg`));
const RULES = { minYawDegrees: 20, minPitchDegrees: 12, sessionMs: 120_000, sameFaceDistance: 0.545 };
const pool = useTestPool({ maxPoolSize: 2 });

let engine: FrameEngine;
const memo = new Map<string, ReturnType<FrameEngine['frame']>>();
beforeAll(async () => {
  engine = await createFaceEngine();
}, 60_000);

const deps: JudgeDeps = {
  analyse: (image) => {
    const k = createHash('sha256').update(image).digest('hex');
    if (!memo.has(k)) memo.set(k, engine.frame(image));
    return memo.get(k)!;
  },
  distance: (a, b) => engine.distance(a, b),
};
const KEY = frameHashKey('test-subject-key');

/** The frames for a session: front, then per challenge the mid-pose and end frames of `kind`, 400 ms apart. */
function sequence(challenges: readonly Challenge[], o: { person?: string; turnsOf?: string; kind?: 'live' | 'flat' | 'still'; gapMs?: number; label?: readonly Challenge[] } = {}): LivenessFrame[] {
  const person = o.person ?? 'grace-hopper';
  const turns = o.turnsOf ?? person;
  const gap = o.gapMs ?? 400;
  const frames: LivenessFrame[] = [{ step: 'front', image: frame(person, 'front'), captured_at_ms: 1000 }];
  challenges.forEach((c, i) => {
    const step = (o.label ?? challenges)[i]!;
    const names = o.kind === 'flat' ? [`flat-${c}`] : o.kind === 'still' ? [`still-${c}`] : [`${c}-mid`, c];
    for (const name of names) frames.push({ step, image: frame(turns, name), captured_at_ms: frames.at(-1)!.captured_at_ms + gap });
  });
  return frames;
}

describe('the liveness judgement', () => {
  it('When a head turns in the session order (either sandbox person, two orders), then it passes with every step reached', async () => {
    for (const [person, order] of [
      ['grace-hopper', ['turn_right', 'look_up', 'turn_left']],
      ['eileen-collins', ['look_up', 'turn_left', 'turn_right']],
    ] as const) {
      const r = await judgeLiveness(deps, order, sequence(order, { person }), RULES);
      expect(r, person).toMatchObject({ status: 'passed', reasons: [] });
      expect(r.steps.map((s) => [s.step, s.passed, s.frames])).toEqual([['front', true, 1], ...order.map((c) => [c, true, 2])]);
      const of = (step: string) => r.steps.find((s) => s.step === step)!;
      expect(of('turn_left').yaw).toBeGreaterThanOrEqual(20);
      expect(of('turn_right').yaw).toBeLessThanOrEqual(-20);
      expect(of('look_up').pitch).toBeGreaterThanOrEqual(12);
    }
  }, 60_000);

  it('When the frames follow another order than the session gave (labelled as the session asks), then pose_not_reached', async () => {
    const session: Challenge[] = ['turn_left', 'turn_right', 'look_up'];
    const recorded: Challenge[] = ['turn_right', 'look_up', 'turn_left'];
    const r = await judgeLiveness(deps, session, sequence(recorded, { label: session }), RULES);
    expect(r.status).toBe('failed');
    expect(r.reasons).toEqual(['pose_not_reached']);
    expect(r.steps.filter((s) => s.step !== 'front').every((s) => !s.passed)).toBe(true);
  }, 60_000);

  it('When every frame is the front picture again (a photo held still, other bytes each time), then still_image', async () => {
    const order: Challenge[] = ['look_up', 'turn_right', 'turn_left'];
    for (const person of ['grace-hopper', 'eileen-collins']) {
      const r = await judgeLiveness(deps, order, sequence(order, { person, kind: 'still' }), RULES);
      expect(r.reasons, person).toEqual(['pose_not_reached', 'still_image']);
    }
  }, 60_000);

  it('When the turns are a flat picture turned and tilted before the camera (a homography), then flat_image', async () => {
    const order: Challenge[] = ['turn_left', 'look_up', 'turn_right'];
    for (const person of ['grace-hopper', 'eileen-collins']) {
      const r = await judgeLiveness(deps, order, sequence(order, { person, kind: 'flat' }), RULES);
      expect(r.status, person).toBe('failed');
      expect(r.reasons, person).toEqual(['pose_not_reached', 'flat_image']);
    }
  }, 60_000);

  it("When the front is one person and the turns another's, then face_changed", async () => {
    const order: Challenge[] = ['turn_right', 'turn_left', 'look_up'];
    const r = await judgeLiveness(deps, order, sequence(order, { person: 'grace-hopper', turnsOf: 'eileen-collins' }), RULES);
    expect(r.status).toBe('failed');
    expect(r.reasons).toContain('face_changed');
  }, 60_000);

  it('When frames are sent again, by the same or another organisation (one table of keyed hashes), then frames_reused; the first time they pass', async () => {
    const order: Challenge[] = ['look_up', 'turn_left', 'turn_right'];
    const judged = async (at: string) => {
      const frames = sequence(order);
      const store = frameHashStore(pool.db, { now: () => new Date(at) }, 30);
      return withReuse(await judgeLiveness(deps, order, frames, RULES), await framesReused(KEY, frames.map((f) => f.image), store));
    };
    expect(await judged('2026-03-02T10:00:00Z')).toMatchObject({ status: 'passed', reasons: [] });
    expect(await judged('2026-03-02T10:05:00Z')).toMatchObject({ status: 'failed', reasons: ['frames_reused'] });
    // Past LIVENESS_FRAME_HASH_DAYS the hashes are forgotten, and removed as later frames are recorded.
    await pool.db.query(sql.unsafe`INSERT INTO liveness_frame_hashes (hash, expires_at) VALUES (${sql.binary(Buffer.alloc(32, 1))}, '2026-03-01T00:00:00Z')`);
    expect(await judged('2026-04-02T10:00:00Z')).toMatchObject({ status: 'passed' });
    expect(await pool.db.oneFirst(sql.unsafe`SELECT count(*)::int FROM liveness_frame_hashes WHERE expires_at <= '2026-04-02T10:00:00Z'`)).toBe(0);
    // The same frame twice in one request is a replay too.
    const twice = sequence(order);
    twice[2]!.image = twice[1]!.image;
    expect(await framesReused(KEY, twice.map((f) => f.image), async () => new Set())).toBe(true);
  }, 60_000);

  it("When a face worker runs the liveness.judge job, then it opens the session's sealed frames and answers the result and its front frame's index only", async () => {
    const ring = [{ id: 'k1', key: Buffer.alloc(32, 7) }];
    const order: Challenge[] = ['turn_left', 'look_up', 'turn_right'];
    const sessionId = 'lvs_00112233445566778899aabb';
    const frames = sequence(order, { person: 'eileen-collins' }).map((f) => {
      const s = seal(ring, f.image, livenessAad(sessionId));
      return { step: f.step, captured_at_ms: f.captured_at_ms, image: { keyId: s.keyId, data: s.data.toString('base64') } };
    });
    const result = await runLivenessJudgement({ ...deps, ring, rules: RULES }, { sessionId, challenges: order, frames });
    // The result, and which frame was the front the poses were measured from (the face match's selfie).
    expect(Object.keys(result).sort()).toEqual(['front', 'reasons', 'status', 'steps']);
    expect(result.front).toBe(0);
    expect(result).toMatchObject({ status: 'passed', reasons: [] });
    // Sealed for another session, the frames do not open.
    await expect(runLivenessJudgement({ ...deps, ring, rules: RULES }, { sessionId: 'lvs_ffffffffffffffffffffffff', challenges: order, frames })).rejects.toThrow();
  }, 60_000);

  it('When the frames come too fast, out of order in time, or over longer than the session, then timing', async () => {
    const order: Challenge[] = ['turn_left', 'turn_right', 'look_up'];
    const fast = await judgeLiveness(deps, order, sequence(order, { gapMs: 100 }), RULES);
    expect(fast.reasons).toEqual(['timing']);
    const backwards = sequence(order);
    backwards[3]!.captured_at_ms = backwards[2]!.captured_at_ms;
    expect((await judgeLiveness(deps, order, backwards, RULES)).reasons).toEqual(['timing']);
    const slow = await judgeLiveness(deps, order, sequence(order, { gapMs: 20_001 }), RULES);
    expect(slow.reasons).toEqual(['timing']);
  }, 60_000);

  it('When a frame shows no face (the mid-pose frame of a step that still reaches its pose), then no_face', async () => {
    const order: Challenge[] = ['turn_left', 'turn_right', 'look_up'];
    const blank = await sharp({ create: { width: 320, height: 400, channels: 3, background: { r: 120, g: 120, b: 120 } } }).jpeg().toBuffer();
    const frames = sequence(order);
    frames[1]!.image = blank;
    const r = await judgeLiveness(deps, order, frames, RULES);
    expect(r.reasons).toEqual(['no_face']);
  }, 60_000);
});
