import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { describe } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { decodeCursor, encodeCursor, lagosRange, pageOf } from '../../lib/pagination.ts';
import { ledgerCsvTransform } from './ledger.csv.ts';
import { listLedgerLines, streamLedgerCsvLines, type LedgerFilter } from './ledger.repository.ts';
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
  const rows = await listLedgerLines(db, filterOf(orgId, q), q.limit + 1, beforeId);
  const page = pageOf(rows, q.limit, (last) => encodeCursor(SCOPE, [last.id]));
  return { data: page.data, next_cursor: page.next };
}

function filterOf(orgId: number, q: Filters): LedgerFilter {
  return { orgId, ...(q.kind ? { kind: q.kind } : {}), range: lagosRange(q.from, q.to) };
}

/**
 * Streams the whole filtered ledger to `res` as CSV while it is read. The status and headers are
 * set only once the query is under way, so a database that cannot be reached still answers a JSON
 * 503; after that a failure can only cut the transfer short (the client sees an incomplete body).
 */
export async function sendLedgerCsv(deps: { exportDb: DatabasePool; logger: Logger }, orgId: number, q: Filters, res: Response): Promise<void> {
  // Settles with the failure (or null) rather than rejecting: it may fail while `reading` is awaited.
  let piping: Promise<unknown> | null = null;
  const reading = streamLedgerCsvLines(deps.exportDb, filterOf(orgId, q), (rows) => {
    res.status(200);
    res.setHeader('Content-Type', 'text/csv; charset=utf-8; header=present');
    res.setHeader('Content-Disposition', `attachment; filename="transactions-${orgId}.csv"`);
    res.setHeader('Cache-Control', 'no-store');
    piping = pipeline(rows, ledgerCsvTransform(), res).then(
      () => null,
      (err: unknown) => err,
    );
  });
  const readFailure = await reading.then(
    () => null,
    (err: unknown) => err,
  );
  if (!piping) throw readFailure ?? new Error('the ledger stream never started');
  // The pipeline settles in every case: done, the client went away, or the row stream was destroyed.
  const sendFailure = await (piping as Promise<unknown>);
  const failure = sendFailure ?? readFailure;
  if (!failure) return;
  if (!res.destroyed) res.destroy();
  // A client that goes away shows up on both sides as a premature close; anything else is the database's.
  const dbFailed = readFailure !== null && (readFailure as { code?: string }).code !== 'ERR_STREAM_PREMATURE_CLOSE';
  deps.logger[dbFailed ? 'warn' : 'info']({ orgId, reqId: res.req.id, err: describe(dbFailed ? readFailure : failure) }, 'ledger CSV export ended early');
}
