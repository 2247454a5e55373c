import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import { decodeCursor, encodeCursor, lagosRange, pageOf } from '../../lib/pagination.ts';
import { requireOrgAdmin, type Principal } from '../auth/index.ts';
import { findTopupView, listTopupPage } from './history.repository.ts';
import type { TopupHistoryRow, TopupListQuery, TopupView } from './history.schemas.ts';
import { TOPUP_REFERENCE } from './topup.schemas.ts';

const SCOPE = 'topups';
const cursorShape = z.tuple([z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/), z.string().regex(TOPUP_REFERENCE)]);

function view(r: TopupHistoryRow): TopupView {
  return {
    reference: r.reference,
    status: r.status,
    units: r.units,
    bonus_units: r.bonus_units,
    base_amount: r.base_amount,
    vat_amount: r.vat_amount,
    service_charge: r.service_charge,
    total_amount: r.total_amount,
    paid_amount: r.paid_amount,
    created_at: r.created_at,
    credited_at: r.credited_at,
  };
}

/** GET /topups: the organisation's top-ups, newest first. */
export async function listTopups(db: DatabasePool, principal: Principal, q: TopupListQuery): Promise<{ data: TopupView[]; next_cursor: string | null }> {
  const orgId = requireOrgAdmin(principal);
  const after = q.cursor ? decodeCursor(SCOPE, q.cursor, cursorShape) : undefined;
  const rows = await listTopupPage(db, {
    orgId,
    ...(q.status ? { status: q.status } : {}),
    range: lagosRange(q.from, q.to),
    ...(after ? { after: { createdKey: after[0], reference: after[1] } } : {}),
    limit: q.limit + 1,
  });
  const page = pageOf(rows, q.limit, (last) => encodeCursor(SCOPE, [last.created_key, last.reference]));
  return { data: page.data.map(view), next_cursor: page.next };
}

/** GET /topups/{reference}: another organisation's reference is refused as verify refuses it. */
export async function getTopup(db: DatabasePool, principal: Principal, reference: string): Promise<TopupView> {
  const orgId = requireOrgAdmin(principal);
  if (!TOPUP_REFERENCE.test(reference)) throw new AppError('bad_request', 'reference is not a top-up reference (TOP-<org>-<16 hex>)');
  const row = await findTopupView(db, reference);
  if (!row) throw new AppError('not_found', 'Top-up reference not found');
  if (row.org_id !== orgId) throw new AppError('forbidden', 'This top-up belongs to another organisation');
  return view(row);
}
