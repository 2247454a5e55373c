import type { Config } from '../../config.ts';
import type { Clock } from '../../lib/clock.ts';
import { openJson } from '../../lib/crypto.ts';
import { AppError, NIN_NOT_FOUND } from '../../lib/errors.ts';
import { requireOrgMember, type Principal } from '../auth/index.ts';
import type { Answer } from './idempotency.ts';
import { selfieRefused } from '../face/index.ts';
import { faceBody, type FaceKept } from './face-kept.ts';
import type { MatchOutcome } from './match.ts';
import type { PersonRecord } from './person.ts';
import { keyRing } from './sealing.ts';
import { failing } from '../../lib/rule.ts';
import { SERVED, servedFields } from './served.ts';
import type { VerificationRow } from './verification.schemas.ts';
import type { VninRefusal } from '../../adapters/identity-authority/index.ts';
import { isVninRefusal, rowByVnin, VNIN_FAILED, VNIN_REFUSAL_DETAIL } from './vnin.ts';
import { verdictOf, verdictOfVerification } from './verdict.ts';

export type { Answer };

export const RECORD_NOT_FOUND = 'Record not found';
export const UPSTREAM_FAILED = 'Identity authority unavailable, nothing was charged';
export const UPSTREAM_RATE_LIMITED = 'Identity authority is rate limiting requests, nothing was charged; retry later';
export const QUEUE_UNAVAILABLE = 'Service temporarily unavailable, nothing was charged; retry later';
export const UPSTREAM_CIRCUIT_OPEN = 'Identity authority is failing; verifications are paused for a few seconds, nothing was charged; retry later';
export const STILL_PENDING = 'Verification still in progress; requery with the reference_id';
export const FACE_NOT_COMPARED = 'Face comparison was unavailable, nothing was charged; send the face match again';
export const RECORD_EXPIRED = 'Record has expired and was erased under the retention policy';
export const UNKNOWN_REFERENCE = 'Unknown reference_id';
export const ACCEPTED_ASYNC = 'Verification accepted; requery with the reference_id';

/** The 404 of a vNIN the authority refused (its detail by the refusal, vnin.ts), for a fixture's answer as for a stored one. */
export function vninRefused(code: VninRefusal): AppError {
  return new AppError('not_found', VNIN_REFUSAL_DETAIL[code], { extra: { code } });
}

/** The answer to an accepted asynchronous verification, to its Idempotency-Key replays and to its requery while it waits. */
export function acceptedAnswer(referenceId: string, headers: Record<string, string> = {}): Answer {
  return {
    status: 202,
    body: { status: 'pending', message: ACCEPTED_ASYNC, reference_id: referenceId, ...verdictOf({ outcome: 'pending' }) },
    headers: { 'Preference-Applied': 'respond-async', ...headers },
  };
}

export const RECORD_RETRIEVED = 'Record retrieved successfully';
export const REQUERY_PENDING = 'Verification still in progress';

/**
 * How a stored verification is answered, by the verification call itself or by a requery. A requery
 * answers one shape per outcome, however the verification was asked for (synchronously,
 * asynchronously or in a batch): found, 200 `{status, message, data, verdict, verdict_reasons, consent}` (`data` the person
 * record, or a match-only verification's result); pending, 202 `{status, message, reference_id,
 * consent}`; anything else, the error the verification call gives.
 */
export function answerOf(deps: { config: Config; clock: Clock }, row: VerificationRow, style: 'verify' | 'requery'): Answer {
  const ref = row.reference_id;
  // Served (a 200 with the record) exactly where SERVED holds: the requery's statement records its
  // audit event by the same rule, compiled to SQL (served.ts, servedByRequery).
  const refused = failing(SERVED, servedFields(row, deps.clock.now(), deps.config.encryptionKeys.map((k) => k.id)));
  if (row.status === 'expired' || refused === 'retained') {
    throw new AppError('not_found', RECORD_EXPIRED);
  }
  switch (row.status) {
    case 'found': {
      if (refused === 'kept' || !row.record_enc) throw new AppError('not_found', RECORD_EXPIRED);
      if (refused === 'sealed_here') throw new Error(`encryption key ${String(row.key_id)} is not configured`);
      if (row.mode === 'face') {
        const body = faceBody(ref, openJson<FaceKept>(keyRing(deps.config.encryptionKeys, row.key_id), { keyId: row.key_id!, data: row.record_enc }, ref));
        return style === 'verify' ? { status: 200, body } : { status: 200, body: { status: 'success', message: RECORD_RETRIEVED, ...body, consent: row.consent ?? null } };
      }
      const kept = openJson<PersonRecord | MatchOutcome>(keyRing(deps.config.encryptionKeys, row.key_id), { keyId: row.key_id!, data: row.record_enc }, ref);
      // A match-only verification kept its comparison alone; a lookup, the record.
      const data = row.mode === 'match' ? { reference_id: ref, ...kept } : { ...kept, reference_id: ref };
      const verdict = verdictOfVerification(row, kept);
      return style === 'verify'
        ? { status: 200, body: { data, ...verdict } }
        : { status: 200, body: { status: 'success', message: RECORD_RETRIEVED, data, ...verdict, consent: row.consent ?? null } };
    }
    case 'not_found':
      // A vNIN refusal keeps its code, whichever mode looked the token up.
      if (isVninRefusal(row.failure_code)) throw vninRefused(row.failure_code);
      if (row.mode === 'vnin') throw vninRefused('vnin_not_found');
      throw new AppError('not_found', row.mode === 'nin' || row.mode === 'match' || row.mode === 'face' ? NIN_NOT_FOUND : RECORD_NOT_FOUND);
    case 'failed':
      if (row.failure_code === 'queue_unavailable') {
        throw new AppError('unavailable', QUEUE_UNAVAILABLE, { extra: { reference_id: ref, code: row.failure_code } });
      }
      if (row.failure_code === 'upstream_circuit_open') {
        throw new AppError('unavailable', UPSTREAM_CIRCUIT_OPEN, { extra: { reference_id: ref, code: row.failure_code } });
      }
      if (row.failure_code === 'face_unavailable') {
        throw new AppError('unavailable', FACE_NOT_COMPARED, { extra: { reference_id: ref, code: row.failure_code } });
      }
      // The face worker refused the selfie at the comparison (its check had passed): the same 422.
      if (row.failure_code?.startsWith('selfie_')) throw selfieRefused(row.failure_code);
      if (row.failure_code === 'upstream_rate_limited') {
        throw new AppError('unavailable', UPSTREAM_RATE_LIMITED, { extra: { reference_id: ref, code: row.failure_code } });
      }
      throw new AppError('upstream_failed', rowByVnin(deps.config.encryptionKeys, row) ? VNIN_FAILED : UPSTREAM_FAILED, { extra: { reference_id: ref, code: row.failure_code ?? 'upstream_unavailable' } });
    case 'pending':
      if (style === 'requery') return { status: 202, body: { status: 'pending', message: REQUERY_PENDING, reference_id: ref, ...verdictOf({ outcome: 'pending' }), consent: row.consent ?? null } };
      throw new AppError('timeout', STILL_PENDING, { extra: { reference_id: ref } });
  }
}

/**
 * POST /verify-nin/requery: free, idempotent, scoped to the caller's organisation. `row` is the
 * organisation's verification with this reference, read in the principal's statement.
 */
export function requeryOf(deps: { config: Config; clock: Clock }, principal: Principal, referenceId: string, row: VerificationRow | null): Answer {
  requireOrgMember(principal);
  // Another organisation's reference reads exactly like an unknown one.
  if (!row) throw new AppError('not_found', UNKNOWN_REFERENCE);
  return answerOf(deps, row, 'requery');
}
