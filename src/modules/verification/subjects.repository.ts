import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

const int = z.union([z.number(), z.bigint(), z.string()]).transform((v) => Number(v));
const time = z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v));

export const subjectRow = z.object({
  reference_id: z.string(),
  org_id: int,
  mode: z.string(),
  reason: z.string(),
  fixture: z.boolean(),
  status: z.string(),
  failure_code: z.string().nullable(),
  record_enc: z.instanceof(Buffer).nullable(),
  key_id: z.string().nullable(),
  delivery: z.string(),
  consent: z.record(z.string(), z.unknown()).nullable(),
  created_at: time,
});

export type SubjectRow = z.infer<typeof subjectRow>;

/** Every verification of one subject, oldest first, served by verifications_subject_idx. */
export async function findBySubject(db: CommonQueryMethods, subjectHash: Buffer, orgId: number | null) {
  const scope = orgId === null ? sql.fragment`` : sql.fragment`AND org_id = ${orgId}`;
  return db.any(sql.type(subjectRow)`
    SELECT reference_id, org_id, mode, reason, fixture, status, failure_code, record_enc, key_id, delivery, consent, created_at
    FROM verifications WHERE subject_hash = ${sql.binary(subjectHash)} ${scope}
    ORDER BY created_at, reference_id`);
}

const erasedRow = z.object({ reference_id: z.string(), org_id: int });

/**
 * Erases the query and record of every finished verification of the subject, as retention does
 * (status `expired`, so a requery answers that the record was erased), and the subject hash itself;
 * the row stays for the ledger line that points at it. A replayable answer under an Idempotency-Key
 * holds the record too: those keys go, as they do after 24 hours.
 */
export async function eraseSubject(db: CommonQueryMethods, subjectHash: Buffer) {
  const rows = await db.any(sql.type(erasedRow)`
    UPDATE verifications SET record_enc = NULL, query_enc = NULL, status = 'expired', subject_hash = NULL,
           -- A consent the person gave on a verification link's page keeps its time and text, not where it came from.
           consent = consent - 'address' - 'user_agent'
    WHERE subject_hash = ${sql.binary(subjectHash)} AND status <> 'pending'
    RETURNING reference_id, org_id`);
  if (rows.length > 0) {
    await db.query(sql.unsafe`
      DELETE FROM idempotency_keys WHERE reference_id = ANY(${sql.array(rows.map((r) => r.reference_id), 'text')})`);
  }
  return rows;
}

/** Verifications of the subject still waiting for the authority (erasure waits for them to settle), named for the refusal. */
export async function pendingOfSubject(db: CommonQueryMethods, subjectHash: Buffer) {
  return db.any(sql.type(z.object({ reference_id: z.string(), batch_id: z.string().nullable() }))`
    SELECT reference_id, batch_id FROM verifications WHERE subject_hash = ${sql.binary(subjectHash)} AND status = 'pending'
    ORDER BY created_at, reference_id LIMIT 20`);
}
