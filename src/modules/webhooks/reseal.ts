import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { reseal, retiredKeyIds, type KeyRing, type SealedCount } from '../../lib/crypto.ts';
import { secretAad } from './endpoints.ts';

/**
 * crypto:reencrypt's batch for endpoint secrets: the current one and, during a rotation, the previous
 * one, both under the row's key, moved together. A deleted endpoint keeps no secret.
 */
export async function resealWebhookSecrets(db: DatabasePool, ring: KeyRing, limit: number): Promise<number> {
  const retired = retiredKeyIds(ring);
  if (retired.length === 0) return 0;
  const active = ring[0]!.id;
  return db.transaction(async (tx) => {
    const rows = await tx.any(sql.type(z.object({ id: z.string(), key_id: z.string(), secret_enc: z.instanceof(Buffer), previous_secret_enc: z.instanceof(Buffer).nullable() }))`
      SELECT id, key_id, secret_enc, previous_secret_enc FROM webhook_endpoints
      WHERE key_id = ANY(${sql.array(retired, 'text')}) AND deleted_at IS NULL
      LIMIT ${limit} FOR UPDATE SKIP LOCKED`);
    for (const r of rows) {
      const current = reseal(ring, { keyId: r.key_id, data: r.secret_enc }, secretAad(r.id));
      const previous = r.previous_secret_enc ? reseal(ring, { keyId: r.key_id, data: r.previous_secret_enc }, secretAad(r.id)).data : null;
      await tx.query(sql.unsafe`
        UPDATE webhook_endpoints SET secret_enc = ${sql.binary(current.data)}, previous_secret_enc = ${previous ? sql.binary(previous) : null}, key_id = ${active}
        WHERE id = ${r.id}`);
    }
    return rows.length;
  });
}

export async function sealedWebhookCounts(db: CommonQueryMethods, activeKeyId: string): Promise<SealedCount[]> {
  const rows = await db.any(sql.type(z.object({ key_id: z.string(), rows: z.coerce.number() }))`
    SELECT key_id, count(*) AS rows FROM webhook_endpoints
    WHERE (key_id < ${activeKeyId} OR key_id > ${activeKeyId}) AND deleted_at IS NULL
    GROUP BY key_id`);
  return rows.map((r) => ({ table: 'webhook_endpoints', ...r }));
}
