import { createHmac, hkdfSync } from 'node:crypto';
import type { CommonQueryMethods } from 'slonik';
import type { Clock } from '../../lib/clock.ts';
import type { JudgeRules } from './judge.ts';
import { recordFrameHashes, removeExpiredFrameHashes } from './liveness.repository.ts';

/**
 * The key of the frames' HMAC, derived (HKDF-SHA-256, its own label) from SUBJECT_HASH_KEY: a key that
 * is never rotated, so a frame's hash stays the same for as long as it is kept, whichever
 * ENCRYPTION_KEYS are current. Without the key, a kept hash cannot be tested against a frame.
 */
export const frameHashKey = (subjectHashKey: string): Buffer => Buffer.from(hkdfSync('sha256', Buffer.from(subjectHashKey, 'utf8'), Buffer.alloc(0), 'liveness-frame-hash', 32));

/** Expired hashes removed with each recording (more than the 12 frames a request may add). */
const PRUNE_PER_RECORDING = 100;

/**
 * `alreadySeen` for framesReused: records the hashes for LIVENESS_FRAME_HASH_DAYS, answers those sent
 * before, and removes some that expired (no retention job needed).
 */
export function frameHashStore(db: CommonQueryMethods, clock: Clock, days: number): (hashes: Buffer[]) => Promise<Set<string>> {
  return async (hashes) => {
    const now = clock.now();
    const seen = await recordFrameHashes(db, hashes, now, new Date(now.getTime() + days * 86_400_000));
    await removeExpiredFrameHashes(db, now, PRUNE_PER_RECORDING);
    return seen;
  };
}

type LivenessConfig = { LIVENESS_MIN_YAW_DEGREES: number; LIVENESS_MIN_PITCH_DEGREES: number; LIVENESS_SESSION_TTL_SECONDS: number };

/** The judging rules from the configuration, with the face match's same-person distance (its default threshold). */
export function livenessRules(c: LivenessConfig, sameFaceDistance: number): JudgeRules {
  return { minYawDegrees: c.LIVENESS_MIN_YAW_DEGREES, minPitchDegrees: c.LIVENESS_MIN_PITCH_DEGREES, sessionMs: c.LIVENESS_SESSION_TTL_SECONDS * 1000, sameFaceDistance };
}

export const frameHash = (key: Buffer, image: Buffer): Buffer => createHmac('sha256', key).update(image).digest();

/** Whether any frame was sent before (its keyed hash already kept) or twice in these frames; records them all. */
export async function framesReused(key: Buffer, images: readonly Buffer[], alreadySeen: (hashes: Buffer[]) => Promise<Set<string>>): Promise<boolean> {
  // Recorded even when the frames fail otherwise: a frame sent once is spent.
  const hashes = images.map((image) => frameHash(key, image));
  const seen = await alreadySeen(hashes);
  return hashes.some((h, i) => seen.has(h.toString('hex')) || hashes.findIndex((o) => o.equals(h)) !== i);
}

