import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { decodeCursor, encodeCursor, lagosRange, pageOf } from '../../lib/pagination.ts';
import { listLedgerLines, type LedgerFilter } from './ledger.repository.ts';
import type { LedgerLine } from './ledger.schemas.ts';

const SCOPE = 'transactions';
const cursorShape = z.tuple([z.number().int().positive().max(Number.MAX_SAFE_INTEGER)]);

type Filters = { kind?: LedgerFilter['kind']; from?: string; to?: string };

/** One page of an organisation's ledger, newest first. */
export async function ledgerPage(
  db: DatabasePool,
  orgId: number,
  q: Filters & { limit: number; cursor?: string },
): Promise<{ data: LedgerLine[]; next_cursor: string | null }> {
  const beforeId = q.cursor ? decodeCursor(SCOPE, q.cursor, cursorShape)[0] : undefined;
  const rows = await listLedgerLines(db, ledgerFilter(orgId, q), q.limit + 1, beforeId);
  const page = pageOf(rows, q.limit, (last) => encodeCursor(SCOPE, [last.id]));
  return {
    data: page.data.map(({ client_id, client_name, ...line }) => ({
      ...line,
      api_client: client_id === null ? null : { client_id, name: client_name ?? '' },
    })),
    next_cursor: page.next,
  };
}

/** The ledger filter of a request's query (JSON page or CSV export). */
export function ledgerFilter(orgId: number, q: Filters): LedgerFilter {
  return { orgId, ...(q.kind ? { kind: q.kind } : {}), range: lagosRange(q.from, q.to) };
}
