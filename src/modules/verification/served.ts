import { after, eqConst, isIn, isNull, not, rule } from '../../lib/rule.ts';
import type { VerificationRow } from './verification.schemas.ts';

/**
 * "A requery serves this verification's record at `now`", defined once (lib/rule.ts): answerOf
 * decides by it, and the requery's statement carries it compiled to SQL (servedByRequery) to record
 * its audit event. In the code, the first check that fails says why not: past its retention (410
 * style "expired"), not found (its own answer), its record erased, or sealed under a key this
 * process does not hold (a fault).
 */
export const SERVED = rule({
  retained: after('expires_at', 'now'),
  found: eqConst('status', 'found'),
  kept: not(isNull('record_enc')),
  sealed_here: isIn('key_id', 'key_ids'),
});

export type ServedCheck = (typeof SERVED)[number]['name'];

/** The rule's fields from a row as the code has it. */
export const servedFields = (row: Pick<VerificationRow, 'status' | 'record_enc' | 'key_id' | 'expires_at'>, now: Date, keyIds: readonly string[]) => ({
  status: row.status,
  record_enc: row.record_enc,
  key_id: row.key_id,
  expires_at: row.expires_at,
  now,
  key_ids: keyIds,
});
