import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { reseal, retiredKeyIds, type KeyRing, type SealedCount } from '../../lib/crypto.ts';
import { secretAad } from './mfa.service.ts';

/**
 * One batch of TOTP secrets moved to the active key. The UPDATE names the old ciphertext, so a
 * secret replaced by a new enrolment meanwhile is left as it is (it is already under the active key).
 */
export async function resealMfaSecrets(db: DatabasePool, ring: KeyRing, limit: number): Promise<number> {
  const retired = retiredKeyIds(ring);
  if (retired.length === 0) return 0;
  const active = ring[0]!.id;
  return db.transaction(async (tx) => {
    const rows = await tx.any(sql.type(z.object({ user_id: z.coerce.number(), key_id: z.string(), secret_enc: z.instanceof(Buffer) }))`
      SELECT user_id, key_id, secret_enc FROM user_mfa WHERE key_id = ANY(${sql.array(retired, 'text')})
      LIMIT ${limit} FOR UPDATE SKIP LOCKED`);
    for (const r of rows) {
      const sealed = reseal(ring, { keyId: r.key_id, data: r.secret_enc }, secretAad(r.user_id));
      await tx.query(sql.unsafe`
        UPDATE user_mfa SET secret_enc = ${sql.binary(sealed.data)}, key_id = ${active} WHERE user_id = ${r.user_id} AND key_id = ${r.key_id}`);
    }
    return rows.length;
  });
}

export async function sealedMfaCounts(db: CommonQueryMethods, activeKeyId: string): Promise<SealedCount[]> {
  const rows = await db.any(sql.type(z.object({ key_id: z.string(), rows: z.coerce.number() }))`
    SELECT key_id, count(*) AS rows FROM user_mfa WHERE key_id < ${activeKeyId} OR key_id > ${activeKeyId} GROUP BY key_id`);
  return rows.map((r) => ({ table: 'user_mfa', ...r }));
}
