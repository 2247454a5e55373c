import type { Challenge, LivenessReason, LivenessResult, Step } from './liveness.schemas.ts';
import { poseFrom, shapeOf, yawOf, type Point, type Pose, type Shape } from './pose.ts';

/**
 * Judging a liveness session's frames: the function a face worker calls with the session's challenges
 * and the frames sent, its model passed in (`analyse`), so that this module loads no model and the
 * rules below run in tests without one. Frames are read, never kept: what leaves is the result.
 */
export type LivenessFrame = { step: Step; image: Buffer; captured_at_ms: number };

/** One frame's face as the model sees it: exactly one face that counts, or why not (the selfie's refusals). */
export type AnalysedFrame = { descriptor: Float32Array; landmarks: readonly Point[] } | { refusal: string };

export type JudgeDeps = {
  analyse(image: Buffer): Promise<AnalysedFrame>;
  /** The face match's descriptor distance. */
  distance(a: Float32Array, b: Float32Array): number;
};

export type JudgeRules = {
  minYawDegrees: number;
  minPitchDegrees: number;
  /** The session's life: the frames must all have been taken within it. */
  sessionMs: number;
  /** The largest descriptor distance still the same person (the face match's default threshold). */
  sameFaceDistance: number;
};

/** The front frame must face the camera within this many degrees of yaw. */
export const FRONT_MAX_YAW_DEGREES = 15;
/** Two steps' frames at least this far apart (ms): a person cannot turn faster. */
export const MIN_STEP_GAP_MS = 200;
/**
 * A frame whose landmarks moved less than this from the front (mean, in eye distances) is still; when
 * every frame is, the sequence is a still picture. Measured (docs/liveness.md): a re-encoded still
 * moves 0.009 at most; each live step of the sandbox frames moves 0.069 or more.
 */
export const STILL_MAX_MOVEMENT = 0.03;
/**
 * A step is flat when its outline narrowed as a pose would but its nose moved less than this share of
 * what that narrowing implies (the largest nose angle of the step over its largest outline angle).
 * Measured on the sandbox frames (docs/liveness.md): heads 0.83 to 1.0, flat pictures 0.03 to 0.35.
 */
export const FLAT_MAX_RATIO = 0.5;
/** The flat test applies once the outline narrowed at least this share of the step's minimum angle. */
export const FLAT_MIN_OUTLINE = 0.75;

const round = (v: number) => Math.round(v * 10) / 10;

/** A frame after the model: its face (descriptor and shape), or the selfie refusal that replaced it. */
export type Seen = { step: Step; face: { descriptor: Float32Array; shape: Shape } | null; refusal: string | null };

/**
 * The face worker's part: every rule but frames_reused (the worker holds no database; the API adds
 * that reason with withReuse, from the frames' keyed hashes).
 */
export async function judgeLiveness(deps: JudgeDeps, challenges: readonly Challenge[], frames: readonly LivenessFrame[], rules: JudgeRules): Promise<LivenessResult & { front?: number }> {
  const analysed: Seen[] = [];
  for (const f of frames) {
    const a = await deps.analyse(f.image);
    analysed.push('refusal' in a ? { step: f.step, face: null, refusal: a.refusal } : { step: f.step, face: { descriptor: a.descriptor, shape: shapeOf(a.landmarks) }, refusal: null });
  }
  const judged = judgeAnalysed(challenges, frames, analysed, { ...rules, distance: deps.distance });
  // `front`: the index of the front frame the poses were measured from (the face match's selfie when passed).
  return { ...finish(judged), ...(judged.front !== undefined ? { front: judged.front } : {}) };
}

/** The result with frames_reused added when a frame was sent before (or twice in one request). */
export function withReuse(result: LivenessResult, reused: boolean): LivenessResult {
  return reused ? finish({ reasons: [...result.reasons, 'frames_reused'], steps: result.steps }) : result;
}

function finish(r: { reasons: LivenessReason[]; steps: LivenessResult['steps'] }): LivenessResult {
  const reasons = [...new Set(r.reasons)].sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b));
  return { status: reasons.length === 0 ? 'passed' : 'failed', reasons, steps: r.steps };
}
const ORDER: readonly LivenessReason[] = ['no_face', 'several_faces', 'face_changed', 'pose_not_reached', 'still_image', 'flat_image', 'frames_reused', 'timing'];

/** The rules, on frames already analysed (pure: no model, no database). */
export function judgeAnalysed(
  challenges: readonly Challenge[],
  frames: readonly LivenessFrame[],
  analysed: readonly Seen[],
  rules: JudgeRules & { distance(a: Float32Array, b: Float32Array): number },
): { reasons: LivenessReason[]; steps: LivenessResult['steps']; front?: number } {
  const reasons: LivenessReason[] = [];
  for (const a of analysed) if (a.refusal) reasons.push(a.refusal === 'selfie_many_faces' ? 'several_faces' : 'no_face');
  if (timingBroken(frames, rules.sessionMs)) reasons.push('timing');

  const order: Step[] = ['front', ...challenges];
  // A step with a frame out of the session's order (after a later step's) is not reached.
  const outOfOrder = new Set<Step>();
  let at = 0;
  for (const f of frames) {
    const i = order.indexOf(f.step);
    if (i < at) outOfOrder.add(f.step);
    else at = i;
  }
  const ofStep = (s: Step) => analysed.filter((a) => a.step === s);
  // The reference: the front frame facing the camera most squarely.
  const fronts = ofStep('front').flatMap((a) => (a.face ? [a.face] : []));
  const front = fronts.sort((a, b) => Math.abs(yawOf(a.shape)) - Math.abs(yawOf(b.shape)))[0];
  if (!front) {
    if (!reasons.includes('no_face')) reasons.push('no_face');
    return { reasons: [...reasons, 'pose_not_reached'], steps: order.map((s) => ({ step: s, passed: false, yaw: null, pitch: null, frames: ofStep(s).length })) };
  }
  const frontYaw = yawOf(front.shape);
  const steps: LivenessResult['steps'] = [{ step: 'front', passed: Math.abs(frontYaw) <= FRONT_MAX_YAW_DEGREES && !outOfOrder.has('front'), yaw: round(frontYaw), pitch: 0, frames: ofStep('front').length }];

  let moved = false;
  for (const a of analysed) {
    if (!a.face || a.face === front) continue;
    if (rules.distance(a.face.descriptor, front.descriptor) > rules.sameFaceDistance) reasons.push('face_changed');
  }
  for (const challenge of challenges) {
    const poses = ofStep(challenge).flatMap((a) => (a.face ? [poseFrom(front.shape, a.face.shape)] : []));
    if (poses.some((p) => p.movement > STILL_MAX_MOVEMENT)) moved = true;
    const axis = (p: Pose) => (challenge === 'turn_left' ? p.yaw : challenge === 'turn_right' ? -p.yaw : p.pitch);
    const outline = (p: Pose) => (challenge === 'look_up' ? p.outlinePitch : p.outlineYaw);
    const min = challenge === 'look_up' ? rules.minPitchDegrees : rules.minYawDegrees;
    const best = poses.sort((p, q) => axis(q) - axis(p))[0];
    const passed = best !== undefined && axis(best) >= min && !outOfOrder.has(challenge);
    // Flat: over the step, the outline narrowed like a pose (FLAT_MIN_OUTLINE of the minimum or more)
    // while the nose, whichever way it went, followed less than FLAT_MAX_RATIO of it.
    const narrowed = Math.max(0, ...poses.map(outline));
    const nose = Math.max(0, ...poses.map((p) => Math.abs(challenge === 'look_up' ? p.pitch : p.yaw)));
    if (narrowed >= FLAT_MIN_OUTLINE * min && nose < FLAT_MAX_RATIO * narrowed) reasons.push('flat_image');
    if (!passed) reasons.push('pose_not_reached');
    steps.push({ step: challenge, passed, yaw: best ? round(best.yaw) : null, pitch: best ? round(best.pitch) : null, frames: ofStep(challenge).length });
  }
  if (!steps[0]!.passed) reasons.push('pose_not_reached');
  if (!moved && analysed.some((a) => a.face && a.face !== front)) reasons.push('still_image');
  return { reasons, steps, front: analysed.findIndex((a) => a.face === front) };
}

/** `captured_at_ms` not increasing, two steps' frames under MIN_STEP_GAP_MS apart, or longer than the session. */
function timingBroken(frames: readonly LivenessFrame[], sessionMs: number): boolean {
  for (let i = 1; i < frames.length; i++) {
    const gap = frames[i]!.captured_at_ms - frames[i - 1]!.captured_at_ms;
    if (gap <= 0) return true;
    if (frames[i]!.step !== frames[i - 1]!.step && gap < MIN_STEP_GAP_MS) return true;
  }
  return frames.length > 0 && frames.at(-1)!.captured_at_ms - frames[0]!.captured_at_ms > sessionMs;
}
