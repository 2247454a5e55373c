import { CHIN, JAW_LEFT, JAW_RIGHT, LEFT_EYE, NOSE_BEFORE_EYES, NOSE_BEFORE_JAW, NOSE_TIP, RIGHT_EYE } from './head-model.ts';

/**
 * A head's pose read from its 68 landmarks, and how the pose changed from the person's own front
 * frame. Everything is measured in the frame turned so that the eyes are level (a tilted head or
 * camera changes nothing), with the eyes' midpoint as origin. docs/liveness.md has the figures.
 */
export type Point = { readonly x: number; readonly y: number };

export type Shape = {
  /** The nose tip's horizontal offset from the jaw outline's midpoint, in half jaw widths. */
  noseOffset: number;
  /** Half the jaw outline's width (landmark 0 to 16), pixels. */
  halfJaw: number;
  /** The distance between the eyes' centres, pixels. */
  eyes: number;
  /** The nose tip's and the chin's height below the eyes' midpoint, pixels. */
  noseDrop: number;
  chinDrop: number;
  /** The landmarks, eyes level, origin at the eyes' midpoint, in eye distances (for stillness). */
  normalised: Point[];
};

const mean = (ps: readonly Point[]): Point => ({ x: ps.reduce((s, p) => s + p.x, 0) / ps.length, y: ps.reduce((s, p) => s + p.y, 0) / ps.length });
const deg = (rad: number) => (rad * 180) / Math.PI;
const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

export function shapeOf(landmarks: readonly Point[]): Shape {
  const right = mean(RIGHT_EYE.map((i) => landmarks[i]!));
  const left = mean(LEFT_EYE.map((i) => landmarks[i]!));
  const mid = { x: (right.x + left.x) / 2, y: (right.y + left.y) / 2 };
  const roll = Math.atan2(left.y - right.y, left.x - right.x);
  const cos = Math.cos(-roll);
  const sin = Math.sin(-roll);
  const level = landmarks.map((p) => ({ x: (p.x - mid.x) * cos - (p.y - mid.y) * sin, y: (p.x - mid.x) * sin + (p.y - mid.y) * cos }));
  const eyes = Math.hypot(left.x - right.x, left.y - right.y);
  const halfJaw = (level[JAW_LEFT]!.x - level[JAW_RIGHT]!.x) / 2;
  const jawMid = (level[JAW_LEFT]!.x + level[JAW_RIGHT]!.x) / 2;
  return {
    noseOffset: (level[NOSE_TIP]!.x - jawMid) / halfJaw,
    halfJaw,
    eyes,
    noseDrop: level[NOSE_TIP]!.y,
    chinDrop: level[CHIN]!.y,
    normalised: level.map((p) => ({ x: p.x / eyes, y: p.y / eyes })),
  };
}

/**
 * The head's yaw on its own (degrees, positive: the person's left, their nose toward the image's right
 * edge), read from the nose against the jaw outline: a head turned by t moves its nose tip, which stands
 * NOSE_BEFORE_JAW in front of the jaw's ends, by that times sin t while the outline narrows by cos t,
 * so the offset is NOSE_BEFORE_JAW * tan t. It assumes a face symmetric about its nose.
 */
export const yawOf = (s: Shape): number => deg(Math.atan(s.noseOffset / NOSE_BEFORE_JAW));

export type Pose = {
  /** Degrees from the front frame: yaw to the person's left, pitch chin up, both read from the nose. */
  yaw: number;
  pitch: number;
  /**
   * The turn and the tilt that the outline's narrowing alone would give (degrees, 0 when it did not
   * narrow): a flat picture turned before the camera narrows as a head does, but its nose stays put.
   */
  outlineYaw: number;
  outlinePitch: number;
  /** Mean landmark movement from the front frame, in eye distances. */
  movement: number;
  /**
   * What no flat picture can do: the landmarks' root-mean-square distance (eye distances) from the best
   * affine map of the front's landmarks onto the frame's. A flat picture turned, tilted or moved before
   * a camera maps onto itself affinely (but for a little perspective), so its landmarks fit; a head's
   * nose and brows stand in front of its outline and move against it (parallax), so they do not.
   */
  parallax: number;
};

/** The root-mean-square residual of the least-squares affine map from `a` to `b` (same length, at least 3). */
export function affineResidual(a: readonly Point[], b: readonly Point[]): number {
  // Normal equations of [x y 1] -> x' and -> y': one 3x3 system, two right-hand sides.
  const m = [0, 0, 0, 0, 0, 0, 0, 0, 0];
  const rx = [0, 0, 0];
  const ry = [0, 0, 0];
  for (const [i, p] of a.entries()) {
    const v = [p.x, p.y, 1];
    for (let r = 0; r < 3; r++) {
      for (let c = 0; c < 3; c++) m[r * 3 + c]! += v[r]! * v[c]!;
      rx[r]! += v[r]! * b[i]!.x;
      ry[r]! += v[r]! * b[i]!.y;
    }
  }
  const det3 = (q: number[]) => q[0]! * (q[4]! * q[8]! - q[5]! * q[7]!) - q[1]! * (q[3]! * q[8]! - q[5]! * q[6]!) + q[2]! * (q[3]! * q[7]! - q[4]! * q[6]!);
  const d = det3(m);
  if (Math.abs(d) < 1e-12) return 0;
  // Cramer's rule: column c replaced by the right-hand side.
  const solve = (rhs: number[]) => [0, 1, 2].map((c) => det3(m.map((x, k) => (k % 3 === c ? rhs[Math.floor(k / 3)]! : x))) / d);
  const ax = solve(rx);
  const ay = solve(ry);
  const sq = a.reduce((sum, p, i) => sum + (ax[0]! * p.x + ax[1]! * p.y + ax[2]! - b[i]!.x) ** 2 + (ay[0]! * p.x + ay[1]! * p.y + ay[2]! - b[i]!.y) ** 2, 0);
  return Math.sqrt(sq / a.length);
}

/** How a frame's head moved from the person's front frame. */
export function poseFrom(front: Shape, frame: Shape): Pose {
  const yaw = yawOf(frame) - yawOf(front);
  // The eye distance shrinks by cos(yaw), not by pitch: with it, the frame's size against the front's.
  const scale = frame.eyes / front.eyes / Math.max(0.2, Math.cos((yaw * Math.PI) / 180));
  // The nose tip drops A below the eyes and stands D before them (D = NOSE_BEFORE_EYES half jaws):
  // with the chin up by p, its drop becomes A cos p - D sin p.
  const a = front.noseDrop;
  const d = NOSE_BEFORE_EYES * front.halfJaw;
  const r = Math.hypot(a, d);
  const pitch = deg(Math.acos(clamp(frame.noseDrop / scale / r, -1, 1)) - Math.atan2(d, a));
  const aspect = (s: Shape) => s.halfJaw / s.chinDrop;
  const outlineYaw = deg(Math.acos(clamp(aspect(frame) / aspect(front), 0, 1)));
  const outlinePitch = deg(Math.acos(clamp(frame.chinDrop / scale / front.chinDrop, 0, 1)));
  const movement = frame.normalised.reduce((sum, p, i) => sum + Math.hypot(p.x - front.normalised[i]!.x, p.y - front.normalised[i]!.y), 0) / frame.normalised.length;
  return { yaw, pitch, outlineYaw, outlinePitch, movement, parallax: affineResidual(front.normalised, frame.normalised) };
}
