import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { decodeCursor, encodeCursor, lagosRange, pageOf } from '../../lib/pagination.ts';
import { requireOrgMember, type Principal } from '../auth/index.ts';
import { verificationSummaryRow, type VerificationListQuery, type VerificationSummary } from './history.schemas.ts';
import { REFERENCE_RE } from './verification.schemas.ts';

const SCOPE = 'verifications';
const cursorShape = z.tuple([z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/), z.string().regex(REFERENCE_RE)]);

/**
 * Newest first by (created_at, reference_id), served by verifications_org_idx. `charged` is read
 * from the ledger, not from the status: once a record is erased its status is `expired`, but its
 * debit line stays (found through the one-debit unique index).
 */
async function listPage(
  db: CommonQueryMethods,
  f: { orgId: number; q: VerificationListQuery; after?: readonly [string, string]; limit: number },
) {
  const { orgId, q } = f;
  const range = lagosRange(q.from, q.to);
  const parts = [sql.fragment`v.org_id = ${orgId}`];
  if (q.status) parts.push(sql.fragment`v.status = ${q.status}`);
  if (q.mode) parts.push(sql.fragment`v.mode = ${q.mode}`);
  if (range.since) parts.push(sql.fragment`v.created_at >= ${sql.timestamp(range.since)}`);
  if (range.before) parts.push(sql.fragment`v.created_at < ${sql.timestamp(range.before)}`);
  if (f.after) parts.push(sql.fragment`(v.created_at, v.reference_id) < (${f.after[0]}::timestamptz, ${f.after[1]})`);
  return db.any(sql.type(verificationSummaryRow)`
    SELECT v.reference_id, v.mode, v.reason, v.status, v.fixture, u.username, v.created_at,
           EXISTS (SELECT 1 FROM wallet_transactions t WHERE t.kind = 'verification' AND t.reference = v.reference_id) AS charged,
           to_char(v.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_key
    FROM verifications v JOIN users u ON u.id = v.user_id
    WHERE ${sql.join(parts, sql.fragment` AND `)}
    ORDER BY v.created_at DESC, v.reference_id DESC
    LIMIT ${f.limit}`);
}

/** GET /verifications: every member of the organisation sees its verifications. */
export async function listVerifications(
  db: DatabasePool,
  principal: Principal,
  q: VerificationListQuery,
): Promise<{ data: VerificationSummary[]; next_cursor: string | null }> {
  const orgId = requireOrgMember(principal);
  const after = q.cursor ? decodeCursor(SCOPE, q.cursor, cursorShape) : undefined;
  const rows = await listPage(db, { orgId, q, ...(after ? { after } : {}), limit: q.limit + 1 });
  const page = pageOf(rows, q.limit, (last) => encodeCursor(SCOPE, [last.created_key, last.reference_id]));
  return {
    data: page.data.map((r) => ({
      reference_id: r.reference_id,
      mode: r.mode,
      reason: r.reason,
      status: r.status,
      charged: r.charged,
      fixture: r.fixture,
      username: r.username,
      created_at: r.created_at,
    })),
    next_cursor: page.next,
  };
}
