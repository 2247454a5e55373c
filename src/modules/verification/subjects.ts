import type { DatabasePool } from 'slonik';
import type { Config } from '../../config.ts';
import { openJson } from '../../lib/crypto.ts';
import { AppError } from '../../lib/errors.ts';
import { recordAudit } from '../audit/index.ts';
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
  record: PersonRecord | null;
};

function requireNin(nin: string): string {
  if (!NIN_RE.test(nin)) throw new AppError('bad_request', 'the NIN must be 11 digits');
  return nin;
}

/** subject:export: every verification of the person, one organisation's or all. One event per organisation involved. */
export async function exportSubject(deps: { db: DatabasePool; config: Config }, nin: string, orgId: number | null): Promise<{ verifications: SubjectVerification[] }> {
  const hash = subjectHash(deps.config.SUBJECT_HASH_KEY, requireNin(nin));
  const rows = await repo.findBySubject(deps.db, hash, orgId);
  const verifications = rows.map((r) => ({
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
    record: r.record_enc && r.key_id ? openJson<PersonRecord>(keyRing(deps.config.encryptionKeys, r.key_id), { keyId: r.key_id, data: r.record_enc }, r.reference_id) : null,
  }));
  await auditPerOrganisation(deps.db, 'subject.exported', orgId, rows);
  return { verifications };
}

/** subject:erase: the person's stored queries and records, at every organisation, at once. */
export async function eraseSubjectData(deps: { db: DatabasePool; config: Config }, nin: string): Promise<{ erased: number; organisations: number[] }> {
  const hash = subjectHash(deps.config.SUBJECT_HASH_KEY, requireNin(nin));
  // A lookup in flight would write its record after the erasure: it settles within seconds (the
  // sweep gives up on it within the hour), then the command is run again.
  if ((await repo.countPendingOfSubject(deps.db, hash)) > 0) {
    throw new AppError('conflict', 'a verification of this person is still in progress; run the command again in a minute');
  }
  const rows = await deps.db.transaction(async (tx) => {
    const erased = await repo.eraseSubject(tx, hash);
    await auditPerOrganisation(tx, 'subject.erased', null, erased);
    return erased;
  });
  return { erased: rows.length, organisations: [...new Set(rows.map((r) => r.org_id))].sort((a, b) => a - b) };
}

/**
 * Each organisation whose verifications were read or erased sees it on its own trail; a request that
 * found nothing is recorded once, under the organisation asked about (or none).
 */
async function auditPerOrganisation(db: Parameters<typeof recordAudit>[0], action: 'subject.exported' | 'subject.erased', askedOrg: number | null, rows: readonly { org_id: number }[]) {
  const counts = new Map<number, number>();
  for (const r of rows) counts.set(r.org_id, (counts.get(r.org_id) ?? 0) + 1);
  if (counts.size === 0) {
    await recordAudit(db, { orgId: askedOrg, actor: 'operator', action, details: { verifications: 0 } });
    return;
  }
  for (const [orgId, n] of [...counts].sort((a, b) => a[0] - b[0])) {
    await recordAudit(db, { orgId, actor: 'operator', action, details: { verifications: n } });
  }
}
