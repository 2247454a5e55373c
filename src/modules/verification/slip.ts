import type { DatabasePool } from 'slonik';
import type { Config } from '../../config.ts';
import type { Clock } from '../../lib/clock.ts';
import { openJson } from '../../lib/crypto.ts';
import { AppError, NIN_NOT_FOUND } from '../../lib/errors.ts';
import { requireOrgMember, type Principal } from '../auth/index.ts';
import { getOrganisation } from '../organisations/index.ts';
import { RECORD_EXPIRED, RECORD_NOT_FOUND, UNKNOWN_REFERENCE, vninRefused } from './answer.ts';
import type { PersonRecord } from './person.ts';
import { keyRing } from './sealing.ts';
import { renderSlip } from './slip-pdf.ts';
import * as repo from './verification.repository.ts';
import { isVninRefusal } from './vnin.ts';
import { verdictOfVerification } from './verdict.ts';

export const SLIP_PENDING = 'Verification still in progress';

/**
 * GET /verify-nin/slip/{reference_id}: a printable PDF of a found verification, free like a requery
 * and refused the way a requery refuses (another organisation's reference reads as unknown). The
 * record is decrypted into memory for the drawing and never written or logged.
 */
export async function printSlip(deps: { db: DatabasePool; config: Config; clock: Clock }, principal: Principal, referenceId: string): Promise<Buffer> {
  const orgId = requireOrgMember(principal);
  const row = await repo.findVerification(deps.db, referenceId, orgId);
  if (!row) throw new AppError('not_found', UNKNOWN_REFERENCE);
  if (row.status === 'expired' || row.expires_at.getTime() <= deps.clock.now().getTime()) throw new AppError('not_found', RECORD_EXPIRED);
  switch (row.status) {
    case 'pending':
      throw new AppError('conflict', SLIP_PENDING);
    case 'not_found':
      // A vNIN refusal keeps its code, whichever mode looked the token up.
      if (isVninRefusal(row.failure_code)) throw vninRefused(row.failure_code);
      if (row.mode === 'vnin') throw vninRefused('vnin_not_found');
      throw new AppError('not_found', row.mode === 'nin' ? NIN_NOT_FOUND : RECORD_NOT_FOUND);
    // A failed lookup has no record to print; a requery explains the failure itself.
    case 'failed':
      throw new AppError('not_found', RECORD_NOT_FOUND);
    case 'found':
      // A match-only verification kept no record: there is nothing to print. A face match's slip is
      // not printed yet (its kept value holds the comparison beside the record).
      if (row.mode === 'match' || row.mode === 'face') throw new AppError('not_found', RECORD_NOT_FOUND);
      break;
  }
  if (!row.record_enc) throw new AppError('not_found', RECORD_EXPIRED);
  const person = openJson<PersonRecord>(keyRing(deps.config.encryptionKeys, row.key_id), { keyId: row.key_id!, data: row.record_enc }, row.reference_id);
  const org = await getOrganisation(deps.db, orgId);
  return renderSlip({
    referenceId: row.reference_id,
    mode: row.mode,
    fixture: row.fixture,
    verifiedAt: row.created_at,
    organisation: org?.name ?? '',
    person,
    verdict: verdictOfVerification(row, person).verdict,
  });
}
