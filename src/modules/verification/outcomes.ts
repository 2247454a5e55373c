import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import type { Clock } from '../../lib/clock.ts';
import { openJson, type KeyRing } from '../../lib/crypto.ts';
import { failing } from '../../lib/rule.ts';
import type { FaceAnswer, FaceKept } from './face-kept.ts';
import type { PersonRecord } from './person.ts';
import { keyRing } from './sealing.ts';
import { SERVED, servedFields } from './served.ts';
import * as repo from './verification.repository.ts';
import { STATUSES, type VerificationStatus } from './verification.schemas.ts';

const outcomeRow = z.object({
  reference_id: z.string(),
  status: z.enum(STATUSES),
  failure_code: z.string().nullable(),
  fixture: z.boolean(),
  record_enc: z.instanceof(Buffer).nullable(),
  key_id: z.string().nullable(),
  created_at: z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v)),
});

/** Where one verification stands: `queuedAt` is when it was accepted; `record` only when asked for and found. */
export type LookupOutcome = { status: VerificationStatus; failureCode: string | null; fixture: boolean; record: PersonRecord | null; queuedAt: Date };

/**
 * The one way another module reads how its lookups stand, by reference (one statement for the list);
 * with `records`, found ones come with the person record. A reference with no verification is absent.
 */
export async function lookupOutcomes(deps: { db: CommonQueryMethods; ring: KeyRing }, refs: readonly string[], o: { records: boolean }): Promise<Map<string, LookupOutcome>> {
  const out = new Map<string, LookupOutcome>();
  if (refs.length === 0) return out;
  const recordCol = o.records ? sql.fragment`record_enc` : sql.fragment`NULL::bytea AS record_enc`;
  const rows = await deps.db.any(sql.type(outcomeRow)`
    SELECT reference_id, status, failure_code, fixture, ${recordCol}, key_id, created_at
    FROM verifications WHERE reference_id = ANY(${sql.array([...refs], 'text')})`);
  for (const r of rows) {
    const record = r.record_enc && r.key_id ? openJson<PersonRecord>(keyRing(deps.ring, r.key_id), { keyId: r.key_id, data: r.record_enc }, r.reference_id) : null;
    out.set(r.reference_id, { status: r.status, failureCode: r.failure_code, fixture: r.fixture, record, queuedAt: r.created_at });
  }
  return out;
}

/**
 * The face results of an organisation's face verifications, by reference: read from the sealed
 * verification each time (never copied), so the retention period and subject erasure end them too. A
 * verification no longer served (erased, expired) or without a comparison has none.
 */
export async function faceResultsOf(deps: { db: CommonQueryMethods; config: Config; clock: Clock }, orgId: number, refs: readonly string[]): Promise<Map<string, FaceAnswer>> {
  const out = new Map<string, FaceAnswer>();
  if (refs.length === 0) return out;
  const rows = await repo.faceVerificationsOf(deps.db, orgId, refs);
  const now = deps.clock.now();
  const keyIds = deps.config.encryptionKeys.map((k) => k.id);
  for (const row of rows) {
    if (failing(SERVED, servedFields(row, now, keyIds)) !== null) continue;
    const kept = openJson<FaceKept>(keyRing(deps.config.encryptionKeys, row.key_id), { keyId: row.key_id!, data: row.record_enc! }, row.reference_id);
    if (kept.face) out.set(row.reference_id, kept.face);
  }
  return out;
}
