import type { CommonQueryMethods } from 'slonik';
import type { Config } from '../../config.ts';
import type { Clock } from '../../lib/clock.ts';
import { openJson } from '../../lib/crypto.ts';
import { failing } from '../../lib/rule.ts';
import type { FaceAnswer, FaceKept } from './face-kept.ts';
import { keyRing } from './sealing.ts';
import { SERVED, servedFields } from './served.ts';
import { verdictOfVerification, type VerdictFields } from './verdict.ts';
import * as repo from './verification.repository.ts';
import type { Mode, VerificationStatus } from './verification.schemas.ts';

/**
 * What a consent receipt may say of a verification: never the record, the query or the person's
 * address and browser, only how it was asked, how it ended and the consent as the person gave it.
 */
export type ReceiptFacts = {
  referenceId: string;
  orgId: number;
  mode: Mode;
  reason: string;
  fixture: boolean;
  status: VerificationStatus;
  createdAt: Date;
  expiresAt: Date;
  consent: { obtainedAt: string; channel: string; noticeVersion: string; givenByPerson: boolean; text: string | null };
  face: FaceAnswer | null;
  /** verdict.ts: the verdict the organisation read, so that the person's receipt says the same. */
  verdict: VerdictFields;
};

/** Why a verification has no receipt: none of this organisation's, erased (or past its retention), or no consent recorded with it. */
export type NoReceipt = 'unknown' | 'erased' | 'no_consent';

/**
 * The facts of an organisation's verification that recorded a consent, while it is kept (a receipt
 * lives exactly as long as its verification); else why there are none.
 */
export async function receiptFactsOf(deps: { db: CommonQueryMethods; config: Config; clock: Clock }, orgId: number, referenceId: string): Promise<ReceiptFacts | NoReceipt> {
  const row = await repo.findVerification(deps.db, referenceId, orgId);
  if (!row) return 'unknown';
  if (row.status === 'expired' || row.expires_at.getTime() <= deps.clock.now().getTime()) return 'erased';
  const c = row.consent as Record<string, unknown> | null | undefined;
  if (!c || typeof c.obtained_at !== 'string') return 'no_consent';
  const keyIds = deps.config.encryptionKeys.map((k) => k.id);
  // What it kept, opened only to read its face result and verdict (never put on the receipt itself).
  const kept = failing(SERVED, servedFields(row, deps.clock.now(), keyIds)) === null ? openJson<unknown>(keyRing(deps.config.encryptionKeys, row.key_id), { keyId: row.key_id!, data: row.record_enc! }, row.reference_id) : null;
  const face: FaceAnswer | null = row.mode === 'face' && kept ? ((kept as FaceKept).face ?? null) : null;
  return {
    referenceId: row.reference_id,
    orgId: row.org_id,
    mode: row.mode,
    reason: row.reason,
    fixture: row.fixture,
    status: row.status,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    consent: {
      obtainedAt: c.obtained_at,
      channel: String(c.channel ?? 'other'),
      noticeVersion: String(c.notice_version ?? ''),
      givenByPerson: c.given_by === 'person',
      text: typeof c.text === 'string' ? c.text : null,
    },
    face,
    verdict: verdictOfVerification(row, kept),
  };
}
