import { z } from 'zod';
import type { LivenessCheck } from '../liveness/index.ts';
import { allFailing, and, eqConst, is, isNull, not, rule, when, type Values } from '../../lib/rule.ts';
import type { MatchOutcome } from './match.ts';
import type { VerificationStatus } from './verification.schemas.ts';
import { isVninRefusal } from './vnin.ts';

/**
 * The one verdict an organisation acts on, written once: every answer and event that carries
 * `verdict` derives it here (the sync and requery answers, history rows, the slip, the subject export,
 * `verification.completed`, `verification_link.submitted`). `status` says how the lookup ended; the
 * verdict says whether the person is verified by every check that was asked for.
 */
export const VERDICTS = ['verified', 'not_verified'] as const;
export type Verdict = (typeof VERDICTS)[number];

/**
 * Why a verification is `not_verified`, every one that applies, in this order (the API reference,
 * Webhooks, section "Verdict": src/modules/webhooks/webhooks.guide.md). A verified one has none; one
 * not decided yet (`verdict: null`) has none either.
 */
export const VERDICT_REASONS = [
  'not_found',
  'refused',
  'failed',
  'details_no_match',
  'no_reference_photo',
  'face_not_compared',
  'face_no_match',
  'liveness_failed',
  'liveness_not_checked',
] as const;
export type VerdictReason = (typeof VERDICT_REASONS)[number];

/**
 * How a verification ended, for the verdict: `refused` is a vNIN the authority would not answer
 * (expired, used, made for another enterprise) or a link submission refused before any lookup (the
 * organisation could not pay or verify); a vNIN that does not exist is `not_found`.
 */
export type VerdictOutcome = 'pending' | 'expired' | 'found' | 'not_found' | 'refused' | 'failed';

/** A face comparison as the verdict and link events read it (face-kept.ts FaceAnswer has these and more). */
type FaceLike = { status: 'compared' | 'no_reference_photo'; match: boolean | null; confidence: number | null; liveness: string; liveness_check?: LivenessCheck | undefined };

/** What the verdict reads: the outcome and, for found ones, the checks that were asked for. */
export type VerdictInput = {
  outcome: VerdictOutcome;
  /** A match-only verification: whether every typed detail matched; absent when none was asked. */
  details?: { all_match: boolean } | null;
  /** A face match: its comparison (null when none was stored); absent when no face was asked. */
  face?: Pick<FaceLike, 'status' | 'match' | 'liveness'> | null;
  /** Liveness was required (the organisation's or the link's setting) even if the answer did not check it. */
  livenessRequired?: boolean;
};

const found = eqConst('outcome', 'found');
const faceAsked = and(found, is('face_asked'));

/**
 * The rule, a list of named checks in lib/rule.ts's language (so it can be compiled to SQL with
 * ruleSql should a statement ever need it): each check holds when its reason does not apply, and
 * the reasons are every check that fails. Checks on a face or details bind only found verifications
 * that asked for them.
 */
export const VERDICT = rule<VerdictReason>({
  not_found: not(eqConst('outcome', 'not_found')),
  refused: not(eqConst('outcome', 'refused')),
  failed: not(eqConst('outcome', 'failed')),
  details_no_match: when(and(found, is('details_asked')), is('details_match')),
  no_reference_photo: when(faceAsked, not(eqConst('face_status', 'no_reference_photo'))),
  face_not_compared: when(faceAsked, not(isNull('face_status'))),
  face_no_match: when(and(faceAsked, eqConst('face_status', 'compared')), is('face_match')),
  // A liveness result is read whenever there is one; `passed` is needed when it was asked or required.
  liveness_failed: when(found, not(eqConst('liveness', 'failed'))),
  liveness_not_checked: when(and(found, is('liveness_asked'), not(eqConst('liveness', 'failed'))), eqConst('liveness', 'passed')),
});

/** The rule's fields from an input, as the code has them. */
export function verdictFields(v: VerdictInput): Values {
  const liveness = v.face?.liveness ?? null;
  return {
    outcome: v.outcome,
    details_asked: v.details !== undefined,
    details_match: v.details?.all_match === true,
    face_asked: v.face !== undefined,
    face_status: v.face?.status ?? null,
    face_match: v.face?.match === true,
    liveness,
    // Asked: a result other than "not checked" came back (liveness ran), or it was required.
    liveness_asked: v.livenessRequired === true || (liveness !== null && liveness !== 'not_checked'),
  };
}

export type VerdictFields = { verdict: Verdict | null; verdict_reasons: VerdictReason[] };

/** The verdict: null (with no reasons) while the verification is pending, or once its record was erased. */
export function verdictOf(v: VerdictInput): VerdictFields {
  if (v.outcome === 'pending' || v.outcome === 'expired') return { verdict: null, verdict_reasons: [] };
  // The fields first, then the rule over them: the rule's language (lib/rule.ts) reads plain values.
  const fields = verdictFields(v);
  const reasons = allFailing(VERDICT, fields);
  return { verdict: reasons.length === 0 ? 'verified' : 'not_verified', verdict_reasons: reasons };
}

/** A row's outcome: its status, a vNIN refusal (other than "no such vNIN") read as `refused`. */
export function outcomeOf(status: VerificationStatus | 'refused', code: string | null | undefined): VerdictOutcome {
  if (status === 'refused') return code === 'vnin_not_found' ? 'not_found' : 'refused';
  if (status === 'not_found' && isVninRefusal(code) && code !== 'vnin_not_found') return 'refused';
  return status;
}

/**
 * A stored verification's verdict, from its row and what it kept (opened): a match-only
 * verification's comparison, a face match's `{record?, face}`, or a record.
 */
export function verdictOfVerification(row: { status: VerificationStatus; failure_code: string | null; mode: string }, kept: unknown): VerdictFields {
  const outcome = outcomeOf(row.status, row.failure_code);
  const input = verdictInputOf(row.mode, outcome, kept);
  return verdictOf(input);
}

/** What the verdict reads of a stored verification: the checks its mode asked for, from what it kept. */
function verdictInputOf(mode: string, outcome: VerdictOutcome, kept: unknown): VerdictInput {
  if (mode === 'match') return { outcome, details: kept ? { all_match: (kept as MatchOutcome).all_match === true } : null };
  if (mode === 'face') {
    // The organisation's require_liveness as it stood at the comparison (face-kept.ts FaceKept).
    const k = kept as { face?: FaceLike | null; liveness_required?: boolean } | null;
    return { outcome, face: k?.face ?? null, livenessRequired: k?.liveness_required === true };
  }
  return { outcome };
}

/**
 * A verification link submission's verdict: how it ended (the link's `status` and `code`) and, when
 * the link asked for a face, its comparison (null when none was made; undefined when no face was asked).
 * `livenessRequired`: the link asked for liveness (its `liveness` field) or its organisation required it.
 */
export function verdictOfLink(
  end: { status: VerificationStatus | 'refused' | 'abandoned'; code: string | null },
  face: FaceLike | null | undefined,
  livenessRequired = false,
): VerdictFields {
  // Abandoned: the submission stopped before any verification was recorded; it never will be.
  const outcome = end.status === 'abandoned' ? 'failed' : outcomeOf(end.status, end.code);
  return verdictOf(face === undefined ? { outcome } : { outcome, face, livenessRequired });
}

/**
 * The face result without its threshold and model, as link events carry it (never personal data);
 * with a passed liveness check, that check (session, challenges, steps as measured, checks, model).
 */
export function faceSummary(face: FaceLike | null): FaceLike | null {
  return face ? { status: face.status, match: face.match, confidence: face.confidence, liveness: face.liveness, ...(face.liveness_check ? { liveness_check: face.liveness_check } : {}) } : null;
}

/** The two fields as documented (OpenAPI), beside `status` wherever a verification is answered. */
export const verdictSchema = {
  verdict: z
    .enum(VERDICTS)
    .nullable()
    .meta({
      description:
        '`verified`: the record was found and every check asked for passed (a face: `match: true`; liveness: `passed` when checked or required); ' +
        '`not_verified`: see `verdict_reasons`; null: not decided yet (pending) or no longer known (the record was erased)',
      example: 'verified',
    }),
  verdict_reasons: z
    .array(z.enum(VERDICT_REASONS))
    .meta({ description: 'Why `not_verified`, every reason that applies (empty when verified or not decided); the list is in the webhooks guide, "Verdict"', example: [] }),
};
