import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { openJson, type KeyRing } from '../../lib/crypto.ts';
import type { PersonRecord } from './person.ts';
import { keyRing } from './sealing.ts';
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
