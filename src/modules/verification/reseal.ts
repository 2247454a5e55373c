import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { reseal, retiredKeyIds, type KeyRing, type SealedCount } from '../../lib/crypto.ts';
import { aad as idempotencyAad } from './idempotency.ts';

const bytes = z.instanceof(Buffer);
const countRow = z.object({ key_id: z.string(), rows: z.coerce.number() });

/**
 * One batch of verifications moved to the active key, in one transaction. FOR UPDATE SKIP LOCKED:
 * a row being settled right now is left to the next batch or run, and a settle that comes after
 * finds the new key_id and seals its record with it (settle.ts), so no record is ever stored under
 * a key its row does not name. Rows under a key no longer configured are not touched (they cannot
 * be opened); the gauge shows them.
 */
export async function resealVerifications(db: DatabasePool, ring: KeyRing, limit: number): Promise<number> {
  const retired = retiredKeyIds(ring);
  if (retired.length === 0) return 0;
  const active = ring[0]!.id;
  return db.transaction(async (tx) => {
    const rows = await tx.any(sql.type(z.object({ reference_id: z.string(), key_id: z.string(), query_enc: bytes.nullable(), record_enc: bytes.nullable() }))`
      SELECT reference_id, key_id, query_enc, record_enc FROM verifications
      WHERE key_id = ANY(${sql.array(retired, 'text')}) AND (query_enc IS NOT NULL OR record_enc IS NOT NULL)
      LIMIT ${limit} FOR UPDATE SKIP LOCKED`);
    for (const r of rows) {
      const move = (data: Buffer | null) => (data ? reseal(ring, { keyId: r.key_id, data }, r.reference_id).data : null);
      const query = move(r.query_enc);
      const record = move(r.record_enc);
      await tx.query(sql.unsafe`
        UPDATE verifications SET key_id = ${active},
          query_enc = ${query ? sql.binary(query) : null}, record_enc = ${record ? sql.binary(record) : null}
        WHERE reference_id = ${r.reference_id} AND key_id = ${r.key_id}`);
    }
    return rows.length;
  });
}

/**
 * Stored Idempotency-Key answers. The request fingerprint stays keyed with the key it was computed
 * with (hash_key_id): it cannot be recomputed without the request, and lives at most the 24-hour
 * replay window.
 */
export async function resealIdempotencyAnswers(db: DatabasePool, ring: KeyRing, limit: number): Promise<number> {
  const retired = retiredKeyIds(ring);
  if (retired.length === 0) return 0;
  const active = ring[0]!.id;
  return db.transaction(async (tx) => {
    const rows = await tx.any(sql.type(z.object({ org_id: z.coerce.number(), key: z.string(), key_id: z.string(), response_enc: bytes }))`
      SELECT org_id, key, key_id, response_enc FROM idempotency_keys
      WHERE key_id = ANY(${sql.array(retired, 'text')}) AND response_enc IS NOT NULL
      LIMIT ${limit} FOR UPDATE SKIP LOCKED`);
    for (const r of rows) {
      const sealed = reseal(ring, { keyId: r.key_id, data: r.response_enc }, idempotencyAad(r.org_id, r.key));
      await tx.query(sql.unsafe`
        UPDATE idempotency_keys SET response_enc = ${sql.binary(sealed.data)}, key_id = ${active}, hash_key_id = coalesce(hash_key_id, key_id)
        WHERE org_id = ${r.org_id} AND key = ${r.key} AND key_id = ${r.key_id}`);
    }
    return rows.length;
  });
}

/** Rows whose ciphertext a key other than the active one protects; the partial indexes keep it to those rows. */
export async function sealedVerificationCounts(db: CommonQueryMethods, activeKeyId: string): Promise<SealedCount[]> {
  const [verifications, answers] = await Promise.all([
    db.any(sql.type(countRow)`
      SELECT key_id, count(*) AS rows FROM verifications
      WHERE (key_id < ${activeKeyId} OR key_id > ${activeKeyId}) AND (query_enc IS NOT NULL OR record_enc IS NOT NULL)
      GROUP BY key_id`),
    db.any(sql.type(countRow)`
      SELECT key_id, count(*) AS rows FROM idempotency_keys
      WHERE (key_id < ${activeKeyId} OR key_id > ${activeKeyId}) AND response_enc IS NOT NULL
      GROUP BY key_id`),
  ]);
  return [...verifications.map((r) => ({ table: 'verifications', ...r })), ...answers.map((r) => ({ table: 'idempotency_keys', ...r }))];
}
