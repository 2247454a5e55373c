import { randomBytes, randomInt } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import { findSession, insertSessionWithinCap, recordJudgement, type SessionRow } from './liveness.repository.ts';
import { CHALLENGES, type Challenge, type LivenessResult, type LivenessSession } from './liveness.schemas.ts';

export const SESSION_NOT_FOUND = 'No liveness session of that id in this organisation';
export const sessionNotFound = () => new AppError('not_found', SESSION_NOT_FOUND, { extra: { code: 'liveness_session_not_found' } });

type Deps = { db: DatabasePool; clock: Clock; config: { LIVENESS_SESSION_TTL_SECONDS: number; LIVENESS_OPEN_SESSIONS_PER_ORG: number } };

/**
 * The three poses in an order drawn from the operating system's cryptographic source (a Fisher-Yates
 * shuffle over crypto.randomInt): a recorded video cannot know the order of a session not yet made.
 */
export function drawChallenges(pick: (max: number) => number = randomInt): Challenge[] {
  const order = [...CHALLENGES];
  for (let i = order.length - 1; i > 0; i--) {
    const j = pick(i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/** A session as answered at `now`: an open session past its time is `expired`. */
export function sessionOf(row: SessionRow, now: Date): LivenessSession {
  const expired = row.status === 'open' && new Date(row.expires_at).getTime() <= now.getTime();
  return { id: row.id, challenges: row.challenges, status: expired ? 'expired' : row.status, expires_at: row.expires_at, ...(row.result ? { result: row.result } : {}) };
}

/** POST /liveness/sessions: free; refused (429) when the organisation holds its cap of open sessions. */
export async function createSession(deps: Deps, orgId: number): Promise<LivenessSession> {
  const now = deps.clock.now();
  const cap = deps.config.LIVENESS_OPEN_SESSIONS_PER_ORG;
  const row = await deps.db.transaction((tx) =>
    insertSessionWithinCap(tx, {
      id: `lvs_${randomBytes(12).toString('hex')}`,
      orgId,
      challenges: drawChallenges(),
      createdAt: now,
      expiresAt: new Date(now.getTime() + deps.config.LIVENESS_SESSION_TTL_SECONDS * 1000),
      cap,
    }),
  );
  if (!row) {
    throw new AppError('rate_limited', `This organisation already holds ${cap} open liveness sessions; use or let expire one before making another`, {
      extra: { code: 'liveness_session_cap', limit: cap },
      headers: { 'Retry-After': String(deps.config.LIVENESS_SESSION_TTL_SECONDS) },
    });
  }
  return sessionOf(row, now);
}

/** GET /liveness/sessions/{id}: another organisation's session is not found, as one that does not exist. */
export async function readSession(deps: Deps, orgId: number, id: string): Promise<LivenessSession> {
  const row = await findSession(deps.db, orgId, id);
  if (!row) throw sessionNotFound();
  return sessionOf(row, deps.clock.now());
}

/**
 * The session a liveness check is to be judged for, refused as the face match must refuse it: 404
 * `liveness_session_not_found` (none in this organisation), 409 `liveness_session_used` (judged
 * already, passed, failed or used), 410 `liveness_session_expired` (open past its time).
 */
export async function sessionToJudge(deps: Deps, orgId: number, id: string): Promise<{ id: string; challenges: Challenge[]; expiresAt: Date }> {
  const row = await findSession(deps.db, orgId, id);
  if (!row) throw sessionNotFound();
  const s = sessionOf(row, deps.clock.now());
  if (s.status === 'expired') throw new AppError('gone', 'The liveness session has expired: start a new one', { extra: { code: 'liveness_session_expired' } });
  if (s.status !== 'open') throw new AppError('conflict', 'The liveness session was judged already: start a new one', { extra: { code: 'liveness_session_used' } });
  return { id: row.id, challenges: row.challenges, expiresAt: new Date(row.expires_at) };
}

/** Records the judgement; a session judged or expired meanwhile is refused as sessionToJudge refuses it. */
export async function settleSession(deps: Deps, orgId: number, id: string, result: LivenessResult): Promise<void> {
  if (await recordJudgement(deps.db, orgId, id, result, deps.clock.now())) return;
  await sessionToJudge(deps, orgId, id);
  throw new AppError('conflict', 'The liveness session was judged already: start a new one', { extra: { code: 'liveness_session_used' } });
}
