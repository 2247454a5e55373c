import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { reseal, retiredKeyIds, type KeyRing, type SealedCount } from '../../lib/crypto.ts';
import { sealedMailAad } from './sealed-mail.ts';

/**
 * One batch of sealed e-mails still waiting in the outbox, moved to the active key. SKIP LOCKED
 * leaves a row being delivered to the next batch; a delivery reads body and key in one row, so it
 * opens either the old or the new ciphertext, both with a configured key.
 */
export async function resealOutbox(db: DatabasePool, ring: KeyRing, limit: number): Promise<number> {
  const retired = retiredKeyIds(ring);
  if (retired.length === 0) return 0;
  const active = ring[0]!.id;
  return db.transaction(async (tx) => {
    const rows = await tx.any(sql.type(z.object({ id: z.coerce.number(), dedupe_key: z.string(), key_id: z.string(), body_enc: z.instanceof(Buffer) }))`
      SELECT id, dedupe_key, key_id, body_enc FROM outbox
      WHERE key_id = ANY(${sql.array(retired, 'text')}) AND body_enc IS NOT NULL
      LIMIT ${limit} FOR UPDATE SKIP LOCKED`);
    for (const r of rows) {
      const sealed = reseal(ring, { keyId: r.key_id, data: r.body_enc }, sealedMailAad(r.dedupe_key));
      await tx.query(sql.unsafe`
        UPDATE outbox SET body_enc = ${sql.binary(sealed.data)}, key_id = ${active} WHERE id = ${r.id} AND key_id = ${r.key_id} AND body_enc IS NOT NULL`);
    }
    return rows.length;
  });
}

export async function sealedOutboxCounts(db: CommonQueryMethods, activeKeyId: string): Promise<SealedCount[]> {
  const rows = await db.any(sql.type(z.object({ key_id: z.string(), rows: z.coerce.number() }))`
    SELECT key_id, count(*) AS rows FROM outbox
    WHERE (key_id < ${activeKeyId} OR key_id > ${activeKeyId}) AND body_enc IS NOT NULL
    GROUP BY key_id`);
  return rows.map((r) => ({ table: 'outbox', ...r }));
}
