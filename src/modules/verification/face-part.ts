import { createHash } from 'node:crypto';
import { AppError } from '../../lib/errors.ts';
import { isAcceptedImage, selfieRefused } from '../face/index.ts';
import { STEPS, type DecodedFrame, type LivenessFrameInput } from '../liveness/index.ts';

// The request's face part, told and decoded among the request's own checks (entrance.ts), before
// anything is claimed, held or queued; and what of it enters the Idempotency-Key's keyed hash. What is
// done with the face afterwards (the check, the lookup, the comparison) is face-run.ts.

/**
 * The face to compare with the record's photo: a selfie, or a liveness session's frames (`front`,
 * then the session's challenges), judged before anything is looked up; the selfie is then the front
 * frame the poses were measured from (face-run.ts, docs/liveness.md).
 */
export type FacePart = { kind: 'selfie'; selfie: string } | { kind: 'liveness'; sessionId: string; frames: LivenessFrameInput[] };

/** At most this many bytes of selfie, decoded (413 beyond). */
export const MAX_SELFIE_BYTES = 2 * 1024 * 1024;

export const SELFIE_TOO_LARGE = `selfie is larger than ${MAX_SELFIE_BYTES} bytes once decoded`;
export const SELFIE_NOT_BASE64 = 'selfie must be base64 (a data: prefix is allowed)';
export const SELFIE_OR_LIVENESS = 'Send exactly one of selfie and liveness';
export const FACE_CONSENT_REQUIRED = 'consent is required for a face match (a face is biometric data)';

/** The selfie's bytes: base64, an optional `data:<type>;base64,` prefix, whitespace ignored. */
export function decodeSelfie(text: string): Buffer {
  const body = text.replace(/^data:[a-z0-9.+/-]*;base64,/i, '').replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body) || body.length === 0) throw new AppError('bad_request', SELFIE_NOT_BASE64);
  // Checked on the text first, so an oversized selfie is never decoded.
  if (Math.floor((body.length * 3) / 4) - (body.endsWith('==') ? 2 : body.endsWith('=') ? 1 : 0) > MAX_SELFIE_BYTES) throw new AppError('payload_too_large', SELFIE_TOO_LARGE);
  const bytes = Buffer.from(body, 'base64');
  // Told by its first bytes, before anything is claimed, held or queued: no decoder sees another format.
  if (!isAcceptedImage(bytes)) throw selfieRefused('selfie_unreadable');
  return bytes;
}

/** At most this many liveness frames in one request, and this many of one step. */
export const MAX_LIVENESS_FRAMES = 12;
export const MAX_FRAMES_PER_STEP = 3;

/**
 * A liveness check's frames, told before anything is claimed, held or queued: the shape (every step
 * sent, 1 to 3 frames each, at most 12; a non-negative integer `captured_at_ms`) and each image by the
 * selfie's rules (base64 400, over 2 MiB decoded 413, not a JPEG, PNG or WebP by its first bytes 422
 * `selfie_unreadable`), the error naming the frame. The line with a judged failure (422
 * `liveness_failed`): what is wrong whatever the session is refused here; what depends on the session
 * or the frames' content (their order, their times, their faces and poses) is judged.
 */
export function decodeFrames(frames: readonly LivenessFrameInput[]): DecodedFrame[] {
  if (frames.length === 0 || frames.length > MAX_LIVENESS_FRAMES) throw new AppError('bad_request', `liveness.frames must hold 1 to ${MAX_LIVENESS_FRAMES} frames`);
  for (const step of STEPS) {
    const n = frames.filter((f) => f.step === step).length;
    if (n < 1 || n > MAX_FRAMES_PER_STEP) throw new AppError('bad_request', `liveness.frames must hold 1 to ${MAX_FRAMES_PER_STEP} frames of each step (front, turn_left, turn_right, look_up); ${step} has ${n}`);
  }
  return frames.map((f, i) => {
    if (!(STEPS as readonly string[]).includes(f.step)) throw new AppError('bad_request', `liveness.frames[${i}].step must be one of ${STEPS.join(', ')}`);
    if (!Number.isSafeInteger(f.captured_at_ms) || f.captured_at_ms < 0) throw new AppError('bad_request', `liveness.frames[${i}].captured_at_ms must be a non-negative integer (milliseconds of one clock of the device)`);
    try {
      return { step: f.step, captured_at_ms: f.captured_at_ms, image: decodeSelfie(f.image) };
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      throw new AppError(err.code, `liveness.frames[${i}].image: ${err.detail.replace(/^selfie /, 'the image ')}`, { ...(err.extra ? { extra: err.extra } : {}) });
    }
  });
}

/** The face a face match compares: a selfie, or a liveness session's frames (judged first). */
export type FaceToMatch = { kind: 'selfie'; selfie: Buffer } | { kind: 'liveness'; sessionId: string; frames: DecodedFrame[] };

/** The face part decoded: its size, encoding and image format told (the errors name what is wrong). */
export function faceToMatch(part: FacePart): FaceToMatch {
  return part.kind === 'selfie' ? { kind: 'selfie', selfie: decodeSelfie(part.selfie) } : { kind: 'liveness', sessionId: part.sessionId, frames: decodeFrames(part.frames) };
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** What of the face enters the Idempotency-Key's keyed hash: the images' SHA-256s (never the images), the session and the frames' steps and times. */
export function faceFingerprint(face: FaceToMatch): object {
  if (face.kind === 'selfie') return { selfie: sha256(face.selfie) };
  return { liveness: { session_id: face.sessionId, frames: face.frames.map((f) => ({ step: f.step, captured_at_ms: f.captured_at_ms, image: sha256(f.image) })) } };
}
