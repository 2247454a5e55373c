import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

// First key of pg_advisory_xact_lock(int, int) for reset e-mails; the second is the user.
const RESET_LOCK = 0x72736574;

/**
 * Records a reset unless the user already has `max` created since `since`, as one atomic step: the
 * per-user advisory lock (held to the end of the caller's transaction) comes first, so the count in
 * the INSERT (a statement of its own, with a snapshot taken after the lock was granted) sees every
 * reset a racing request committed. Twenty parallel requests insert exactly `max` rows. Returns
 * the new id, or null when the cap is reached. Run it inside a transaction.
 */
export async function insertResetWithinCap(
  tx: CommonQueryMethods,
  r: { userId: number; tokenHash: Buffer; now: Date; expiresAt: Date; since: Date; max: number },
): Promise<number | null> {
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(${RESET_LOCK}, (${r.userId}::bigint % 2147483647)::int)`);
  return tx.maybeOneFirst(sql.type(z.object({ id: z.coerce.number() }))`
    INSERT INTO password_resets (user_id, token_hash, expires_at, created_at)
    SELECT ${r.userId}, ${sql.binary(r.tokenHash)}, ${sql.timestamp(r.expiresAt)}, ${sql.timestamp(r.now)}
    WHERE (SELECT count(*) FROM password_resets WHERE user_id = ${r.userId} AND created_at > ${sql.timestamp(r.since)}) < ${r.max}
    RETURNING id`);
}

/**
 * Uses the token: the one statement that can succeed once per token, so two racing requests cannot
 * both reset. Returns the user, or null for an unknown, used or expired token, and for a token of a
 * disabled user or of a retired organisation's user (disabling voids them too: the
 * users_void_resets trigger; this is the second lock on the door).
 */
export async function claimReset(db: CommonQueryMethods, tokenHash: Buffer, now: Date): Promise<number | null> {
  return db.maybeOneFirst(sql.type(z.object({ user_id: z.coerce.number() }))`
    UPDATE password_resets r SET used_at = ${sql.timestamp(now)}
    FROM users u LEFT JOIN organisations o ON o.id = u.org_id
    WHERE r.token_hash = ${sql.binary(tokenHash)} AND r.used_at IS NULL AND r.expires_at > ${sql.timestamp(now)}
      AND u.id = r.user_id AND NOT u.disabled AND o.deleted_at IS NULL
    RETURNING r.user_id`);
}

/** Once the password has changed, any other reset link of the user is void too. */
export async function voidOpenResets(db: CommonQueryMethods, userId: number, now: Date): Promise<void> {
  await db.query(sql.unsafe`UPDATE password_resets SET used_at = ${sql.timestamp(now)} WHERE user_id = ${userId} AND used_at IS NULL`);
}
