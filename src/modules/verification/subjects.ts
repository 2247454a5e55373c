import type { CommonQueryMethods, DatabasePool, DatabaseTransactionConnection } from 'slonik';
import type { Config } from '../../config.ts';
import { openJson } from '../../lib/crypto.ts';
import { AppError } from '../../lib/errors.ts';
import { recordAudit } from '../audit/index.ts';
import type { FaceAnswer, FaceKept } from './face-kept.ts';
import { verdictOfVerification, type VerdictFields } from './verdict.ts';
import type { VerificationStatus } from './verification.schemas.ts';
import type { MatchOutcome } from './match.ts';
import type { PersonRecord } from './person.ts';
import { keyRing } from './sealing.ts';
import { subjectHash } from './subject.ts';
import * as repo from './subjects.repository.ts';

// Data-subject requests (access and erasure), run by an operator on a person's written request.
// Found by the subject hash, never by a NIN kept in the clear. The NIN given to the command is not
// written anywhere, the audit trail included: its events carry counts and organisations only.

export const NIN_RE = /^\d{11}$/;

export type SubjectVerification = {
  org_id: number;
  reference_id: string;
  created_at: string;
  /** How it was asked for (sync, async, batch), as in GET /verifications; `kind` is what was looked up. */
  mode: string;
  kind: string;
  reason: string;
  /** The consent statement the verification was made under, or null. */
  consent: Record<string, unknown> | null;
  fixture: boolean;
  outcome: string;
  failure_code: string | null;
  /** The person record as returned (for a match-only verification, its comparison), while it is still kept. */
  record: PersonRecord | MatchOutcome | null;
  /** A face match's comparison as stored (match, confidence, threshold, model, liveness); null for other kinds. The selfie is never kept. */
  face: FaceAnswer | null;
} & VerdictFields;

/** A row of a batch that waits, not yet queued for the authority, with a query of the person. */
export type WaitingBatchRow = { org_id: number; batch_id: string; row: number; state: 'waiting'; batch_status: string };

/**
 * Where a person's queries wait before they become verifications: the rows of batches not yet queued
 * (the batches module answers for them; a paused batch can wait for days). `cancel` runs inside the
 * erasure's transaction: it first takes the locks that batch feeders take, so that no row of the
 * person can be queued while it runs, and a row a feeder was queueing is a pending verification by
 * the time it returns.
 */
export type WaitingQueries = {
  /** Run first, outside any transaction: brings the subject hashes of waiting rows up to date. */
  prepare(db: DatabasePool): Promise<void>;
  list(db: CommonQueryMethods, subject: Buffer, orgId: number | null): Promise<WaitingBatchRow[]>;
  cancel(tx: DatabaseTransactionConnection, subject: Buffer): Promise<WaitingBatchRow[]>;
};

function requireNin(nin: string): string {
  if (!NIN_RE.test(nin)) throw new AppError('bad_request', 'the NIN must be 11 digits');
  return nin;
}

/**
 * What a verification still keeps: a face match keeps its record (not with match_only) beside its
 * comparison, and whether liveness was required when it was compared (read for the verdict only).
 */
function kept(config: Config, r: repo.SubjectRow): { record: PersonRecord | MatchOutcome | null; face: FaceAnswer | null; livenessRequired: boolean } {
  if (!r.record_enc || !r.key_id) return { record: null, face: null, livenessRequired: false };
  const opened = openJson<PersonRecord | MatchOutcome | FaceKept>(keyRing(config.encryptionKeys, r.key_id), { keyId: r.key_id, data: r.record_enc }, r.reference_id);
  if (r.mode !== 'face') return { record: opened as PersonRecord | MatchOutcome, face: null, livenessRequired: false };
  const f = opened as FaceKept;
  return { record: f.record ?? null, face: f.face, livenessRequired: f.liveness_required === true };
}

/** What a verification keeps, with its verdict read from it (verdict.ts): a face match's from its comparison. */
function withVerdict(r: repo.SubjectRow, { livenessRequired, ...k }: ReturnType<typeof kept>) {
  const faceKept = k.face || k.record ? { face: k.face, ...(livenessRequired ? { liveness_required: true } : {}) } : null;
  const verdict = verdictOfVerification({ status: r.status as VerificationStatus, failure_code: r.failure_code, mode: r.mode }, r.mode === 'face' ? faceKept : k.record);
  return { ...k, ...verdict };
}

/**
 * subject:export: every verification of the person, one organisation's or all, and the batch rows that
 * still wait to be looked up. One event per organisation involved.
 */
export async function exportSubject(
  deps: { db: DatabasePool; config: Config },
  waiting: WaitingQueries,
  nin: string,
  orgId: number | null,
): Promise<{ verifications: SubjectVerification[]; waiting_batch_rows: WaitingBatchRow[] }> {
  const hash = subjectHash(deps.config.SUBJECT_HASH_KEY, requireNin(nin));
  const rows = await repo.findBySubject(deps.db, hash, orgId);
  await waiting.prepare(deps.db);
  const waitingRows = await waiting.list(deps.db, hash, orgId);
  const verifications = rows.map((r): SubjectVerification => ({
    org_id: r.org_id,
    reference_id: r.reference_id,
    created_at: r.created_at.toISOString(),
    mode: r.delivery,
    kind: r.mode,
    reason: r.reason,
    consent: r.consent,
    fixture: r.fixture,
    outcome: r.status,
    failure_code: r.failure_code,
    ...withVerdict(r, kept(deps.config, r)),
  }));
  await auditPerOrganisation(deps.db, 'subject.exported', orgId, rows, waitingRows);
  return { verifications, waiting_batch_rows: waitingRows };
}

/**
 * subject:erase: the person's stored queries and records, at every organisation, at once; their batch
 * rows still waiting end cancelled (`subject_erased`), so their lookups never happen. All in one
 * transaction: refused (nothing changed) while a verification of theirs is in progress.
 */
export async function eraseSubjectData(
  deps: { db: DatabasePool; config: Config },
  waiting: WaitingQueries,
  nin: string,
): Promise<{ erased: number; batch_rows_cancelled: number; organisations: number[] }> {
  const hash = subjectHash(deps.config.SUBJECT_HASH_KEY, requireNin(nin));
  await waiting.prepare(deps.db);
  const { rows, cancelled } = await deps.db.transaction(async (tx) => {
    // The feeders' locks first: a row being queued meanwhile is a pending verification after this.
    const cancelled = await waiting.cancel(tx, hash);
    // A lookup in flight would write its record after the erasure: it settles within seconds (the
    // sweep gives up on it within the hour), then the command is run again.
    const inProgress = await repo.pendingOfSubject(tx, hash);
    if (inProgress.length > 0) {
      const named = inProgress.map((p) => (p.batch_id ? `${p.reference_id} (batch ${p.batch_id})` : p.reference_id)).join(', ');
      throw new AppError('conflict', `a verification of this person is still in progress (${named}); nothing was erased, run the command again in a minute`);
    }
    const erased = await repo.eraseSubject(tx, hash);
    await auditPerOrganisation(tx, 'subject.erased', null, erased, cancelled);
    return { rows: erased, cancelled };
  });
  const orgs = new Set([...rows, ...cancelled].map((r) => r.org_id));
  return { erased: rows.length, batch_rows_cancelled: cancelled.length, organisations: [...orgs].sort((a, b) => a - b) };
}

/**
 * Each organisation whose verifications or waiting batch rows were read or erased sees it on its own
 * trail; a request that found nothing is recorded once, under the organisation asked about (or none).
 */
async function auditPerOrganisation(
  db: Parameters<typeof recordAudit>[0],
  action: 'subject.exported' | 'subject.erased',
  askedOrg: number | null,
  rows: readonly { org_id: number }[],
  batchRows: readonly { org_id: number }[],
) {
  const counts = new Map<number, { verifications: number; batch_rows: number }>();
  const at = (org: number) => counts.get(org) ?? counts.set(org, { verifications: 0, batch_rows: 0 }).get(org)!;
  for (const r of rows) at(r.org_id).verifications++;
  for (const r of batchRows) at(r.org_id).batch_rows++;
  if (counts.size === 0) {
    await recordAudit(db, { orgId: askedOrg, actor: 'operator', action, details: { verifications: 0, batch_rows: 0 } });
    return;
  }
  for (const [orgId, n] of [...counts].sort((a, b) => a[0] - b[0])) {
    await recordAudit(db, { orgId, actor: 'operator', action, details: n });
  }
}
