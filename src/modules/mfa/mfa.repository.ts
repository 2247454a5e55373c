import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

const mfaRow = z.object({
  user_id: z.coerce.number(),
  secret_enc: z.instanceof(Buffer),
  key_id: z.string(),
  enabled: z.boolean(),
  last_step: z.coerce.number(),
});
export type MfaRow = z.infer<typeof mfaRow>;

const columns = sql.fragment`user_id, secret_enc, key_id, enabled_at IS NOT NULL AS enabled, last_step`;

export async function findMfa(db: CommonQueryMethods, userId: number): Promise<MfaRow | null> {
  return db.maybeOne(sql.type(mfaRow)`SELECT ${columns} FROM user_mfa WHERE user_id = ${userId}`);
}

/** A new (or replacement) enrolment; nothing back when two-factor sign-in is already on. */
export async function upsertPending(db: CommonQueryMethods, userId: number, sealed: { keyId: string; data: Buffer }): Promise<boolean> {
  const row = await db.maybeOne(sql.type(z.object({ user_id: z.coerce.number() }))`
    INSERT INTO user_mfa (user_id, secret_enc, key_id) VALUES (${userId}, ${sql.binary(sealed.data)}, ${sealed.keyId})
    ON CONFLICT (user_id) DO UPDATE SET secret_enc = EXCLUDED.secret_enc, key_id = EXCLUDED.key_id, last_step = 0, used_steps = '{}', created_at = now()
      WHERE user_mfa.enabled_at IS NULL
    RETURNING user_id`);
  return row !== null;
}

/**
 * Takes the code of `step`, once: one statement, so of two requests with the same code (or a replay)
 * only one finds the step not yet in used_steps (the row lock makes the second re-read it). A step
 * other than the last used is fine (the previous step's code after the current one's). Only steps a
 * code could still match are remembered: matchStep accepts now-1 to now+1, so steps more than two
 * below the newest used can never come back. `enabling` turns a pending enrolment on; otherwise it
 * must be on.
 */
export async function takeStep(db: CommonQueryMethods, userId: number, step: number, enabling: boolean): Promise<boolean> {
  const state = enabling ? sql.fragment`enabled_at IS NULL` : sql.fragment`enabled_at IS NOT NULL`;
  const r = await db.query(sql.unsafe`
    UPDATE user_mfa
    SET last_step = greatest(last_step, ${step}),
        used_steps = array(SELECT s FROM unnest(used_steps || ${step}::bigint) AS u(s) WHERE s >= greatest(last_step, ${step}) - 2 ORDER BY s),
        enabled_at = coalesce(enabled_at, now())
    WHERE user_id = ${userId} AND ${state} AND NOT (${step}::bigint = ANY(used_steps)) AND ${step} >= last_step - 2`);
  return r.rowCount === 1;
}

export async function replaceRecoveryCodes(db: CommonQueryMethods, userId: number, hashes: Buffer[]): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM user_mfa_recovery_codes WHERE user_id = ${userId}`);
  for (const h of hashes) {
    await db.query(sql.unsafe`INSERT INTO user_mfa_recovery_codes (user_id, code_hash) VALUES (${userId}, ${sql.binary(h)})`);
  }
}

/** Spends a recovery code: one statement, so a code is good for exactly one sign-in. */
export async function useRecoveryCode(db: CommonQueryMethods, userId: number, hash: Buffer): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE user_mfa_recovery_codes SET used_at = now()
    WHERE user_id = ${userId} AND code_hash = ${sql.binary(hash)} AND used_at IS NULL
      AND EXISTS (SELECT 1 FROM user_mfa WHERE user_id = ${userId} AND enabled_at IS NOT NULL)`);
  return r.rowCount === 1;
}

/** One statement: the secret and its recovery codes go together. */
export async function deleteMfa(db: CommonQueryMethods, userId: number): Promise<void> {
  await db.query(sql.unsafe`
    WITH codes AS (DELETE FROM user_mfa_recovery_codes WHERE user_id = ${userId})
    DELETE FROM user_mfa WHERE user_id = ${userId}`);
}
