import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

// consent_receipts: a token's hash and the verification it opens. Erased with the verification (the
// table's foreign key and trigger: docs/receipts.md).

const receiptRow = z.object({ reference_id: z.string(), org_id: z.coerce.number(), purpose: z.string().nullable() });

export async function insertReceipt(db: CommonQueryMethods, r: { tokenHash: Buffer; referenceId: string; purpose: string | null; at: Date }): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO consent_receipts (token_hash, reference_id, purpose, created_at)
    VALUES (${sql.binary(r.tokenHash)}, ${r.referenceId}, ${r.purpose}, ${sql.timestamp(r.at)})`);
}

/** The receipt behind a token's hash, with its verification's organisation. */
export async function findByTokenHash(db: CommonQueryMethods, tokenHash: Buffer) {
  return db.maybeOne(sql.type(receiptRow)`
    SELECT r.reference_id, v.org_id, r.purpose
    FROM consent_receipts r JOIN verifications v ON v.reference_id = r.reference_id
    WHERE r.token_hash = ${sql.binary(tokenHash)}`);
}

/** The link's purpose recorded with a verification's receipt; null when it has no receipt row (not made on a link). */
export async function purposeOf(db: CommonQueryMethods, referenceId: string): Promise<string | null> {
  return db.maybeOneFirst(sql.type(z.object({ purpose: z.string().nullable() }))`SELECT purpose FROM consent_receipts WHERE reference_id = ${referenceId}`);
}
