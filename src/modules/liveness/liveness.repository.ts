import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { CHALLENGES, livenessResultSchema, type LivenessResult } from './liveness.schemas.ts';

// The liveness module's tables: liveness_sessions and liveness_frame_hashes. Only it writes them.

const time = z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v).toISOString());

export const sessionRow = z.object({
  id: z.string(),
  org_id: z.coerce.number(),
  challenges: z.array(z.enum(CHALLENGES)),
  status: z.enum(['open', 'passed', 'failed', 'used']),
  expires_at: time,
  result: livenessResultSchema.nullable(),
});
export type SessionRow = z.infer<typeof sessionRow>;

const columns = sql.fragment`id, org_id, challenges, status, expires_at, result`;

// First key of pg_advisory_xact_lock(int, int) for an organisation's open sessions; the second is the organisation.
const OPEN_SESSIONS_LOCK = 0x6c767330;

/**
 * Inserts a session unless the organisation already holds `cap` open ones (not judged, not expired
 * at `now`): counted under a lock held until the transaction ends, so two requests at once never both
 * take the last place. Null when the cap is reached.
 */
export async function insertSessionWithinCap(
  tx: DatabaseTransactionConnection,
  s: { id: string; orgId: number; challenges: readonly string[]; createdAt: Date; expiresAt: Date; cap: number },
): Promise<SessionRow | null> {
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(${OPEN_SESSIONS_LOCK}, (${s.orgId}::bigint % 2147483647)::int)`);
  return tx.maybeOne(sql.type(sessionRow)`
    INSERT INTO liveness_sessions (id, org_id, challenges, created_at, expires_at)
    SELECT ${s.id}, ${s.orgId}, ${sql.array([...s.challenges], 'text')}, ${sql.timestamp(s.createdAt)}, ${sql.timestamp(s.expiresAt)}
    WHERE (SELECT count(*) FROM liveness_sessions
           WHERE org_id = ${s.orgId} AND status = 'open' AND expires_at > ${sql.timestamp(s.createdAt)}) < ${s.cap}
    RETURNING ${columns}`);
}

/** The organisation's session; null when there is none of that id in this organisation. */
export async function findSession(db: CommonQueryMethods, orgId: number, id: string): Promise<SessionRow | null> {
  return db.maybeOne(sql.type(sessionRow)`SELECT ${columns} FROM liveness_sessions WHERE id = ${id} AND org_id = ${orgId}`);
}

/**
 * Records the frames' hashes (kept until `expiresAt`) and returns those already there and still
 * current at `now`, in one statement: of two requests sending one frame at once, the second waits for
 * the first's row and finds it. A hash past its time is renewed, not counted as seen.
 */
export async function recordFrameHashes(db: CommonQueryMethods, hashes: readonly Buffer[], now: Date, expiresAt: Date): Promise<Set<string>> {
  const hex = [...new Set(hashes.map((h) => h.toString('hex')))];
  if (hex.length === 0) return new Set();
  const fresh = await db.anyFirst(sql.type(z.object({ hash: z.string() }))`
    INSERT INTO liveness_frame_hashes (hash, expires_at)
    SELECT decode(h, 'hex'), ${sql.timestamp(expiresAt)} FROM unnest(${sql.array(hex, 'text')}::text[]) AS h
    ON CONFLICT (hash) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE liveness_frame_hashes.expires_at <= ${sql.timestamp(now)}
    RETURNING encode(hash, 'hex') AS hash`);
  const inserted = new Set(fresh);
  return new Set(hex.filter((h) => !inserted.has(h)));
}

/**
 * Removes up to `limit` frame hashes past their time. Run with every recording (a request adds at most
 * 12), so the table stays bounded without a job of its own: each request removes more than it adds
 * once hashes start to expire.
 */
export async function removeExpiredFrameHashes(db: CommonQueryMethods, now: Date, limit: number): Promise<number> {
  const r = await db.query(sql.unsafe`
    DELETE FROM liveness_frame_hashes WHERE hash IN (
      SELECT hash FROM liveness_frame_hashes WHERE expires_at <= ${sql.timestamp(now)} ORDER BY expires_at LIMIT ${limit})`);
  return r.rowCount;
}

/**
 * Records a session's judgement: open and unexpired at `now` becomes passed or failed. False when it
 * was judged meanwhile (two requests with one session: the first to record wins) or has expired.
 */
export async function recordJudgement(db: CommonQueryMethods, orgId: number, id: string, result: LivenessResult, now: Date): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE liveness_sessions SET status = ${result.status}, result = ${sql.jsonb(result)}, judged_at = ${sql.timestamp(now)}
    WHERE id = ${id} AND org_id = ${orgId} AND status = 'open' AND expires_at > ${sql.timestamp(now)}`);
  return r.rowCount === 1;
}


/** A passed session taken by the face match it was judged for: `used`, once. */
export async function markSessionUsed(db: CommonQueryMethods, orgId: number, id: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`UPDATE liveness_sessions SET status = 'used' WHERE id = ${id} AND org_id = ${orgId} AND status = 'passed'`);
  return r.rowCount === 1;
}
