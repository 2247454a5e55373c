/**
 * The face match's rules, as pure functions: which faces count, how a descriptor distance becomes a
 * confidence, and the default threshold. The figures behind them are in docs/adr/0006-face-model.md
 * and bench/RESULTS.md (section Face match).
 */

/** What every answer names as the model: the package, its version, and the three networks used. */
export const FACE_MODEL = 'face-api 1.7.15 (ssd_mobilenetv1 + face_landmark_68 + face_recognition, tfjs-wasm 4.22.0)';

/**
 * The smallest selfie face accepted: the detected box's shorter side, in pixels, after EXIF rotation.
 * The recognition network works on a 150x150 crop of the face; measured on the two portraits, faces of
 * 45 px and 20 px (a whole scene shrunk to 120 px wide) still matched but drifted (0.24 and 0.47),
 * while head crops with faces of 64 px and more stayed within 0.32. A phone selfie's face is hundreds
 * of pixels wide: below 64 px the person was far away or the image was shrunk, and a retake is cheap.
 */
export const MIN_SELFIE_FACE_PX = 64;

/**
 * A second detection counts as another face only when it is at least this share of the largest
 * face's size: on a 120-px JPEG-quality-30 copy of Grace Hopper the detector also saw an 11x15 px
 * "face" in her hair (score 0.74); a second person close enough to matter is not that small.
 */
export const OTHER_FACE_MIN_SHARE = 0.4;

/** Detections below this score are ignored (face-api's own default for ssd_mobilenetv1 is 0.5). */
export const MIN_DETECTION_SCORE = 0.5;

/** Selfies are shrunk to fit this many pixels on their longer side before detection (cost, not accuracy). */
export const MAX_SELFIE_SIDE_PX = 1024;

/**
 * The formats decoded, told by their first bytes before any decoder sees them. sharp (libvips) also
 * reads SVG, TIFF, GIF, AVIF and HEIF, and picks its loader from the content, not from what the
 * caller claims: a 366-byte SVG of stacked filters kept a face worker busy for minutes. A phone
 * camera or a browser's canvas makes JPEG, PNG or WebP; anything else is refused as unreadable.
 */
export type ImageFormat = 'jpeg' | 'png' | 'webp';

export function imageFormatOf(bytes: Uint8Array): ImageFormat | null {
  const at = (offset: number, ...expected: number[]) => expected.every((b, i) => bytes[offset + i] === b);
  if (at(0, 0xff, 0xd8, 0xff)) return 'jpeg';
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'png';
  // RIFF <size> WEBP
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return 'webp';
  return null;
}

export const isAcceptedImage = (bytes: Uint8Array): boolean => imageFormatOf(bytes) !== null;

/**
 * The most pixels (width x height, as the image's header declares them) a decoded image may have:
 * 50 megapixels, above any phone camera's photo (48 MP sensors save 12 MP photos by default, 48 MP at
 * most). A larger header is refused before its pixels are decoded, so a small, highly compressible
 * file cannot make the worker inflate gigapixels.
 */
export const MAX_INPUT_PIXELS = 50_000_000;

/** Decoding (and shrinking) one image stops after this many seconds: the image is then refused as unreadable. */
export const DECODE_TIMEOUT_S = 5;

/**
 * Confidence 0-100 from the Euclidean distance d between the two 128-value descriptors:
 * `100 / (1 + exp((d - 0.6) / 0.05))`, rounded to one decimal. Monotone (non-increasing) in d; d = 0.6
 * (face-api's customary same-person limit) is 50, d = 0.545 is 75, d = 0.4 is 98.2, d = 0.7 is 11.9.
 */
export function confidenceOf(distance: number): number {
  const c = 100 / (1 + Math.exp((distance - 0.6) / 0.05));
  return Math.round(c * 10) / 10;
}

/**
 * The default threshold: a match is confidence >= 75, i.e. distance <= 0.545. Measured on the two
 * public-domain portraits and their transformed copies: same person 0.07-0.47, different people
 * 0.64-0.75; 0.545 sits near the middle of that gap. It is the integrator's risk decision to move.
 */
export const DEFAULT_FACE_THRESHOLD = 75;

/** The descriptor distance at a confidence (confidenceOf's inverse): 0.545 at the default threshold. */
export const distanceAt = (confidence: number): number => 0.6 + 0.05 * Math.log(100 / confidence - 1);

/** The same person, for the frames of one liveness check: within the default threshold's distance. */
export const FACE_SAME_PERSON_DISTANCE = distanceAt(DEFAULT_FACE_THRESHOLD);

export type Detected = { score: number; width: number; height: number };

/** The faces that count: the largest, and the others at least OTHER_FACE_MIN_SHARE of its size. */
export function facesThatCount<T extends Detected>(faces: T[]): T[] {
  const sized = faces.filter((f) => f.score >= MIN_DETECTION_SCORE);
  const largest = Math.max(0, ...sized.map((f) => Math.min(f.width, f.height)));
  return sized.filter((f) => Math.min(f.width, f.height) >= largest * OTHER_FACE_MIN_SHARE).sort((a, b) => b.width * b.height - a.width * a.height);
}

export const SELFIE_REFUSALS = ['selfie_unreadable', 'selfie_no_face', 'selfie_many_faces', 'selfie_face_too_small'] as const;
export type SelfieRefusal = (typeof SELFIE_REFUSALS)[number];

export const SELFIE_REFUSAL_DETAIL: Record<SelfieRefusal, string> = {
  selfie_unreadable: 'selfie is not a readable JPEG, PNG or WebP image',
  selfie_no_face: 'no face was found in the selfie',
  selfie_many_faces: 'the selfie shows more than one face',
  selfie_face_too_small: `the face in the selfie is smaller than ${MIN_SELFIE_FACE_PX} pixels; come closer or send a larger image`,
};

/** A selfie's faces (those that count), judged: the one face, or why it is refused. */
export function judgeSelfie<T extends Detected>(faces: T[]): { face: T } | { refusal: SelfieRefusal } {
  const counted = facesThatCount(faces);
  if (counted.length === 0) return { refusal: 'selfie_no_face' };
  if (counted.length > 1) return { refusal: 'selfie_many_faces' };
  const face = counted[0]!;
  if (Math.min(face.width, face.height) < MIN_SELFIE_FACE_PX) return { refusal: 'selfie_face_too_small' };
  return { face };
}

/** A reference photo is usable when exactly one face counts in it (no minimum size: authority photos are small). */
export function judgeReference<T extends Detected>(faces: T[]): T | null {
  const counted = facesThatCount(faces);
  return counted.length === 1 ? counted[0]! : null;
}
