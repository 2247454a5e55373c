import type { Response } from 'express';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { decodeCursor, encodeCursor, lagosRange, pageOf } from '../../lib/pagination.ts';
import { listEvents, type EventFilter, type EventRow } from './audit.repository.ts';
import { AUDIT_CSV_COLUMNS, type AuditEventJson, type AuditFilters } from './audit.schemas.ts';

const SCOPE = 'audit-events';
const cursorShape = z.tuple([z.number().int().positive().max(Number.MAX_SAFE_INTEGER)]);
const CSV_BATCH = 1000;

function toJson(r: EventRow): AuditEventJson {
  return {
    id: r.id,
    at: r.at.toISOString(),
    org_id: r.org_id,
    actor: r.actor,
    action: r.action as AuditEventJson['action'],
    target: r.target,
    request_id: r.request_id,
    ip: r.ip,
    details: r.details,
    hash: r.hash.toString('hex'),
  };
}

function filterOf(orgId: number, q: AuditFilters): EventFilter {
  return { orgId, ...(q.action ? { action: q.action } : {}), range: lagosRange(q.from, q.to) };
}

/** One page of an organisation's events, newest first. */
export async function auditPage(db: DatabasePool, orgId: number, q: AuditFilters & { limit: number; cursor?: string | undefined }) {
  const beforeId = q.cursor ? decodeCursor(SCOPE, q.cursor, cursorShape)[0] : undefined;
  const rows = await listEvents(db, filterOf(orgId, q), q.limit + 1, beforeId);
  const page = pageOf(rows, q.limit, (last) => encodeCursor(SCOPE, [last.id]));
  return { data: page.data.map(toJson), next_cursor: page.next };
}

// RFC 4180. Request ids come from callers (X-Request-Id): a field that a spreadsheet would read as
// a formula is prefixed with a quote.
function field(v: unknown): string {
  let s = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/**
 * The whole filtered trail as CSV, newest first, read in short keyset batches from the main pool
 * (no connection is held while the client reads), waiting for the client between batches.
 */
export async function sendAuditCsv(db: DatabasePool, orgId: number, q: AuditFilters, res: Response): Promise<void> {
  const filter = filterOf(orgId, q);
  let rows = await listEvents(db, filter, CSV_BATCH);
  res.status(200);
  res.setHeader('Content-Type', 'text/csv; charset=utf-8; header=present');
  res.setHeader('Content-Disposition', `attachment; filename="audit-events-${orgId}.csv"`);
  res.setHeader('Cache-Control', 'no-store');
  res.write(`${AUDIT_CSV_COLUMNS.join(',')}\r\n`);
  for (;;) {
    const text = rows.map((r) => { const j = toJson(r); return AUDIT_CSV_COLUMNS.map((c) => field(j[c])).join(','); }).join('\r\n');
    if (text && !res.write(`${text}\r\n`)) await new Promise<void>((resolve) => { res.once('drain', resolve); res.once('close', resolve); });
    if (rows.length < CSV_BATCH || res.destroyed) break;
    rows = await listEvents(db, filter, CSV_BATCH, rows[rows.length - 1]!.id);
  }
  res.end();
}
