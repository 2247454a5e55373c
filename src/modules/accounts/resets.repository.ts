import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

export async function insertReset(db: CommonQueryMethods, r: { userId: number; tokenHash: Buffer; expiresAt: Date }): Promise<number> {
  return db.oneFirst(sql.type(z.object({ id: z.coerce.number() }))`
    INSERT INTO password_resets (user_id, token_hash, expires_at)
    VALUES (${r.userId}, ${sql.binary(r.tokenHash)}, ${sql.timestamp(r.expiresAt)})
    RETURNING id`);
}

/** Open resets of the user created since `since`: a cap on how many e-mails one username can trigger. */
export async function countRecentResets(db: CommonQueryMethods, userId: number, since: Date): Promise<number> {
  return db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`
    SELECT count(*) AS n FROM password_resets WHERE user_id = ${userId} AND created_at > ${sql.timestamp(since)}`);
}

/**
 * Uses the token: the one statement that can succeed once per token, so two racing requests cannot
 * both reset. Returns the user, or null for an unknown, used or expired token.
 */
export async function claimReset(db: CommonQueryMethods, tokenHash: Buffer, now: Date): Promise<number | null> {
  return db.maybeOneFirst(sql.type(z.object({ user_id: z.coerce.number() }))`
    UPDATE password_resets SET used_at = ${sql.timestamp(now)}
    WHERE token_hash = ${sql.binary(tokenHash)} AND used_at IS NULL AND expires_at > ${sql.timestamp(now)}
    RETURNING user_id`);
}

/** Once the password has changed, any other reset link of the user is void too. */
export async function voidOpenResets(db: CommonQueryMethods, userId: number, now: Date): Promise<void> {
  await db.query(sql.unsafe`UPDATE password_resets SET used_at = ${sql.timestamp(now)} WHERE user_id = ${userId} AND used_at IS NULL`);
}
