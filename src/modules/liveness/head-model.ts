/**
 * A generic head's depth at each of the 68 landmarks (iBUG 300-W order), in units of half the jaw
 * width (landmark 0 to 16 is 2), the nose tip (30) at 0 and the face toward the camera positive.
 * Used twice: to read yaw and pitch from a frame's landmarks (pose.ts), and to turn a sandbox portrait
 * into a head that turns (scripts/liveness-frames.ts).
 *
 * Where the numbers come from: set by hand (this project, 2026), anchored on the six-point mean face
 * that OpenCV head-pose tutorials use (nose tip 0; eye outer corners x +-225, z -135; mouth corners
 * x +-150, z -125; chin z -65; in those units the cheek at the jaw's top is about x +-350, z -310),
 * divided by that half width (350), and filled in along each feature by its place between the
 * anchors (the jaw receding smoothly from the chin to the ear, the nose bridge rising to the tip).
 * It is a mean shape, not a person's: the judgement reads only differences between a person's own
 * frames, so a face flatter or rounder than this one changes the angles read by a few degrees.
 */
export const LANDMARK_DEPTH: readonly number[] = [
  // jaw 0-16: from the top of the right cheek (by the ear) down to the chin (8) and up to the left
  -0.89, -0.85, -0.78, -0.68, -0.56, -0.44, -0.33, -0.24, -0.19, -0.24, -0.33, -0.44, -0.56, -0.68, -0.78, -0.85, -0.89,
  // brows 17-21 (outer to inner), 22-26 (inner to outer)
  -0.55, -0.42, -0.33, -0.27, -0.25, -0.25, -0.27, -0.33, -0.42, -0.55,
  // nose bridge 27-30 (30: the tip), nostrils 31-35
  -0.33, -0.24, -0.13, 0, -0.2, -0.14, -0.1, -0.14, -0.2,
  // right eye 36-41 (36 outer corner), left eye 42-47 (45 outer corner)
  -0.39, -0.33, -0.31, -0.33, -0.32, -0.34, -0.33, -0.31, -0.33, -0.39, -0.34, -0.32,
  // outer lips 48-59 (48 and 54 the corners), inner lips 60-67
  -0.36, -0.28, -0.22, -0.2, -0.22, -0.28, -0.36, -0.3, -0.25, -0.22, -0.25, -0.3,
  -0.34, -0.24, -0.22, -0.24, -0.34, -0.26, -0.23, -0.26,
];

/** Landmarks the pose reads. */
export const JAW_RIGHT = 0;
export const JAW_LEFT = 16;
export const CHIN = 8;
export const NOSE_TIP = 30;
export const RIGHT_EYE = [36, 37, 38, 39, 40, 41] as const;
export const LEFT_EYE = [42, 43, 44, 45, 46, 47] as const;

/** How far the nose tip stands in front of the jaw's ends (half-jaw-width units): yaw's lever. */
export const NOSE_BEFORE_JAW = LANDMARK_DEPTH[NOSE_TIP]! - LANDMARK_DEPTH[JAW_RIGHT]!;
/** How far the nose tip stands in front of the eyes' centres: pitch's lever. */
export const NOSE_BEFORE_EYES = LANDMARK_DEPTH[NOSE_TIP]! - [...RIGHT_EYE, ...LEFT_EYE].reduce((s, i) => s + LANDMARK_DEPTH[i]!, 0) / 12;
