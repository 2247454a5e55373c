import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import { cursorTimestamp, decodeCursor, encodeCursor, lagosRange, pageOf } from '../../lib/pagination.ts';
import { requireAccountsKeeper, type Principal } from '../auth/index.ts';
import { findTopupView, listTopupPage, streamTopupCsvLines } from './history.repository.ts';
import { TOPUP_CSV_COLUMNS, type TopupFilters, type TopupHistoryRow, type TopupListQuery, type TopupView } from './history.schemas.ts';
import { TOPUP_REFERENCE } from './topup.schemas.ts';

const SCOPE = 'topups';
const cursorShape = z.tuple([cursorTimestamp, z.string().regex(TOPUP_REFERENCE)]);

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
    invoice_number: r.invoice_number,
    paid_at: r.paid_at,
  };
}

/** GET /topups: the organisation's top-ups, newest first. */
export async function listTopups(db: DatabasePool, principal: Principal, q: TopupListQuery): Promise<{ data: TopupView[]; next_cursor: string | null }> {
  const orgId = requireAccountsKeeper(principal);
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
  const orgId = requireAccountsKeeper(principal);
  if (!TOPUP_REFERENCE.test(reference)) throw new AppError('bad_request', 'reference is not a top-up reference (TOP-<org>-<16 hex>)');
  const row = await findTopupView(db, reference);
  if (!row) throw new AppError('not_found', 'Top-up reference not found');
  if (row.org_id !== orgId) throw new AppError('forbidden', 'This top-up belongs to another organisation');
  return view(row);
}

export const TOPUP_CSV_HEADER = `${TOPUP_CSV_COLUMNS.join(',')}\r\n`;

/** GET /topups as CSV: the whole filtered range, newest first, streamed from `db` (the export pool). */
export function streamTopupCsv(db: DatabasePool, principal: Principal, q: TopupFilters) {
  const orgId = requireAccountsKeeper(principal);
  const filter = { orgId, ...(q.status ? { status: q.status } : {}), range: lagosRange(q.from, q.to) };
  return { orgId, stream: (onStream: (rows: NodeJS.ReadableStream) => void) => streamTopupCsvLines(db, filter, onStream) };
}
