import type { Response } from 'express';
import { z } from 'zod';
import { decodeCursor, encodeCursor } from '../../lib/pagination.ts';
import { actorOf, recordAudit } from '../audit/index.ts';
import type { Principal } from '../auth/index.ts';
import { lookupOutcomes, VNIN_REFUSAL_DETAIL, type LookupOutcome } from '../verification/index.ts';
import * as repo from './batches.repository.ts';
import { RESULT_COLUMNS, type BatchResult } from './batches.schemas.ts';
import { requireBatch, type BatchDeps } from './batches.service.ts';

const SCOPE = 'batch-results';
const cursorShape = z.tuple([z.string().regex(/^BAT-[A-Z0-9]{12}$/), z.number().int().min(0)]);

const NOT_FOUND_DETAIL = { nin: 'NIN not found', phone: 'Record not found', vnin: VNIN_REFUSAL_DETAIL.vnin_not_found } as const;

/** A vNIN row not found says which refusal it was, in the words of the single call's 404. */
function notFoundDetail(r: repo.ResultRow): string {
  if (r.kind === 'vnin') return (r.failure_code !== null && r.failure_code in VNIN_REFUSAL_DETAIL ? VNIN_REFUSAL_DETAIL[r.failure_code as keyof typeof VNIN_REFUSAL_DETAIL] : null) ?? NOT_FOUND_DETAIL.vnin;
  return r.kind === 'phone' ? NOT_FOUND_DETAIL.phone : NOT_FOUND_DETAIL.nin;
}
const EMPTY_PERSON = { fname: null, mname: null, lname: null, dob: null, gender: null, phone: null };

function resultOf(r: repo.ResultRow, outcomes: Map<string, LookupOutcome>): BatchResult {
  const base = { row: r.row_no, client_ref: r.client_ref, reference_id: r.reference_id, ...EMPTY_PERSON };
  if (r.invalid_reason !== null) return { ...base, status: 'invalid', detail: r.invalid_reason };
  switch (r.state) {
    case 'found': {
      const p = r.reference_id ? outcomes.get(r.reference_id)?.record : null;
      if (!p) return { ...base, status: 'found', detail: 'Record has expired and was erased under the retention policy' };
      return { ...base, status: 'found', fname: p.fname, mname: p.mname, lname: p.lname, dob: p.dob, gender: p.gender, phone: p.phone, detail: null };
    }
    case 'not_found':
      return { ...base, status: 'not_found', detail: notFoundDetail(r) };
    case 'failed':
      return { ...base, status: 'failed', detail: r.failure_code ?? 'upstream_unavailable' };
    case 'cancelled':
      return { ...base, status: 'cancelled', detail: r.failure_code === repo.SUBJECT_ERASED ? "cancelled before this row was looked up: the person's data was erased on their request" : 'batch cancelled before this row was looked up' };
    default:
      return { ...base, status: 'pending', detail: null };
  }
}

/** One page of results in row order, person records opened for the found rows. */
async function page(deps: BatchDeps, batchId: string, afterRow: number, limit: number): Promise<{ rows: BatchResult[]; more: boolean }> {
  const rows = await repo.resultRows(deps.db, batchId, afterRow, limit + 1);
  const shown = rows.slice(0, limit);
  const refs = [...new Set(shown.filter((r) => r.state === 'found' && r.reference_id).map((r) => r.reference_id!))];
  const outcomes = await lookupOutcomes({ db: deps.db, ring: deps.config.encryptionKeys }, refs, { records: true });
  return { rows: shown.map((r) => resultOf(r, outcomes)), more: rows.length > limit };
}

/** The download is a read of personal data: recorded by reference (who, which batch), never by value. */
async function recordDownload(deps: BatchDeps, principal: Principal, batchId: string, format: 'csv' | 'json'): Promise<void> {
  await recordAudit(deps.db, { orgId: principal.orgId, actor: actorOf(principal), action: 'batch.results_downloaded', target: `batch:${batchId}`, details: { format } });
  deps.logger.info({ event: 'batch.results_downloaded', batchId, orgId: principal.orgId, userId: principal.userId, apiClientId: principal.apiClientId, format }, 'batch results downloaded');
}

export async function resultsPage(deps: BatchDeps, principal: Principal, id: string, q: { limit: number; cursor?: string | undefined }): Promise<{ data: BatchResult[]; next_cursor: string | null }> {
  const b = await requireBatch(deps, principal, id);
  let after = 0;
  if (q.cursor) {
    const [batchId, row] = decodeCursor(SCOPE, q.cursor, cursorShape);
    if (batchId !== b.id) decodeCursor(SCOPE, '!', cursorShape);
    after = row;
  }
  if (after === 0) await recordDownload(deps, principal, b.id, 'json');
  const p = await page(deps, b.id, after, q.limit);
  const last = p.rows[p.rows.length - 1];
  return { data: p.rows, next_cursor: p.more && last ? encodeCursor(SCOPE, [b.id, last.row]) : null };
}

// A field a spreadsheet would run as a formula is prefixed with an apostrophe (client_ref and the
// names are the caller's and the authority's text); quotes, commas and line ends are quoted (RFC 4180).
function field(v: string | number | null): string {
  if (v === null) return '';
  let s = String(v);
  if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

const CSV_PAGE = 1000;

/**
 * The CSV download, read page by page by row number (a keyset cursor) and written as the client
 * takes it: one page of records is open in memory at a time, never the whole batch.
 */
export async function sendResultsCsv(deps: BatchDeps, principal: Principal, id: string, res: Response): Promise<void> {
  const b = await requireBatch(deps, principal, id);
  await recordDownload(deps, principal, b.id, 'csv');
  res.status(200);
  res.setHeader('Content-Type', 'text/csv; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Disposition', `attachment; filename="${b.id}-results.csv"`);
  res.write(`${RESULT_COLUMNS.join(',')}\r\n`);
  for (let after = 0; ; ) {
    const p = await page(deps, b.id, after, CSV_PAGE);
    const text = p.rows.map((r) => `${RESULT_COLUMNS.map((c) => field(r[c])).join(',')}\r\n`).join('');
    if (text && !res.write(text)) {
      await new Promise<void>((resolve) => {
        res.once('drain', resolve);
        res.once('close', resolve);
      });
    }
    if (res.destroyed) return;
    const last = p.rows[p.rows.length - 1];
    if (!p.more || !last) break;
    after = last.row;
  }
  res.end();
}
