import { confidenceOf, FACE_MODEL, type FaceComparison } from '../face/index.ts';
import { openJson, sealJson, type KeyRing } from '../../lib/crypto.ts';
import { livenessCheckSchema, type LivenessCheck } from '../liveness/index.ts';
import type { PersonRecord } from './person.ts';
import { verdictOf, type VerdictFields } from './verdict.ts';

/** What a face match answers, and keeps (sealed like a record) in its verification. */
export type FaceAnswer = {
  status: 'compared' | 'no_reference_photo';
  match: boolean | null;
  confidence: number | null;
  threshold: number;
  /** `passed`: the selfie was the front frame of a passed liveness check, described in `liveness_check`. */
  liveness: 'not_checked' | 'passed';
  liveness_check?: LivenessCheck;
  model: string;
};

/**
 * A face verification's kept value: the record (absent with match_only) and the comparison (null
 * until the comparison step has stored it). The selfie and the descriptors are never part of it.
 * `liveness_required`: the organisation required liveness (`require_liveness`) when the comparison
 * was made, read with its threshold; so the verdict keeps the rule it was made under, whatever the
 * setting says later. Absent: not required.
 */
export type FaceKept = { record?: PersonRecord; face: FaceAnswer | null; liveness_required?: true };

/** The kept value's `liveness_required`, as the organisation's settings say it at the comparison. */
export function livenessRequiredOf(settings: { require_liveness: boolean }): Pick<FaceKept, 'liveness_required'> {
  return settings.require_liveness ? { liveness_required: true } : {};
}

/** The body of a face verification's 200 answer (it was found: its verdict reads the comparison). */
export function faceBody(ref: string, kept: FaceKept): { data: object; face: FaceAnswer | null } & VerdictFields {
  const verdict = verdictOf({ outcome: 'found', face: kept.face, livenessRequired: kept.liveness_required === true });
  return { data: kept.record ? { ...kept.record, reference_id: ref } : { reference_id: ref }, face: kept.face, ...verdict };
}

/** The answer to a comparison under the organisation's threshold (0-100). */
export function faceAnswerOf(c: FaceComparison, threshold: number, check?: LivenessCheck): FaceAnswer {
  const liveness = check ? { liveness: 'passed' as const, liveness_check: check } : { liveness: 'not_checked' as const };
  if (c.outcome === 'no_reference_photo') return { status: 'no_reference_photo', match: null, confidence: null, threshold, ...liveness, model: FACE_MODEL };
  const confidence = confidenceOf(c.distance);
  return { status: 'compared', match: confidence >= threshold, confidence, threshold, ...liveness, model: FACE_MODEL };
}

/** A passed liveness check sealed for one verification's lookup job (associated data `liveness-check:<referenceId>`). */
export function sealedLivenessCheck(ring: KeyRing, referenceId: string, check: LivenessCheck): { keyId: string; data: string } {
  const s = sealJson(ring, check, `liveness-check:${referenceId}`);
  return { keyId: s.keyId, data: s.data.toString('base64') };
}

/** The liveness check sealed by sealedLivenessCheck for this verification. */
export function openedLivenessCheck(ring: KeyRing, referenceId: string, sealed: { keyId: string; data: string }): LivenessCheck {
  return livenessCheckSchema.parse(openJson(ring, { keyId: sealed.keyId, data: Buffer.from(sealed.data, 'base64') }, `liveness-check:${referenceId}`));
}
