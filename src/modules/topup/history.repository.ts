import { sql, type CommonQueryMethods } from 'slonik';
import type { TimeRange } from '../../lib/pagination.ts';
import { topupHistoryRow, type TopupHistoryRow } from './history.schemas.ts';
import type { TopupStatus } from './topup.schemas.ts';

const columns = sql.fragment`
  reference, org_id, status, units, bonus_units, base_amount, vat_amount, service_charge, total_amount, paid_amount,
  created_at, credited_at, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_key`;

/**
 * Newest first by (created_at, reference): the pair is unique and the cursor names it exactly, so a
 * page boundary holds while top-ups are added. Served by topups_org_idx (org_id, created_at).
 */
export async function listTopupPage(
  db: CommonQueryMethods,
  f: { orgId: number; status?: TopupStatus; range: TimeRange; after?: { createdKey: string; reference: string }; limit: number },
): Promise<readonly TopupHistoryRow[]> {
  const parts = [sql.fragment`org_id = ${f.orgId}`];
  if (f.status) parts.push(sql.fragment`status = ${f.status}`);
  if (f.range.since) parts.push(sql.fragment`created_at >= ${sql.timestamp(f.range.since)}`);
  if (f.range.before) parts.push(sql.fragment`created_at < ${sql.timestamp(f.range.before)}`);
  if (f.after) parts.push(sql.fragment`(created_at, reference) < (${f.after.createdKey}::timestamptz, ${f.after.reference})`);
  return db.any(sql.type(topupHistoryRow)`
    SELECT ${columns} FROM topups WHERE ${sql.join(parts, sql.fragment` AND `)}
    ORDER BY created_at DESC, reference DESC LIMIT ${f.limit}`);
}

export async function findTopupView(db: CommonQueryMethods, reference: string): Promise<TopupHistoryRow | null> {
  return db.maybeOne(sql.type(topupHistoryRow)`SELECT ${columns} FROM topups WHERE reference = ${reference}`);
}
