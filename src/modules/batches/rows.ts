import { parse } from 'csv-parse/sync';
import { AppError } from '../../lib/errors.ts';
import { rowText } from './batches.schemas.ts';
import { isFixtureNin, isFixtureVnin, ninBody, phoneBody, VNIN_INVALID, type Consent } from '../verification/index.ts';

/** The contract's limits of one batch. */
export const MAX_ROWS = 50_000;
export const MAX_BODY = '10mb';
export const TOO_MANY_ROWS = `A batch holds at most ${MAX_ROWS} rows`;
export const NO_ROWS = 'A batch needs at least one row';
export const ONE_IDENTIFIER = 'exactly one of nin, vnin or phone_no is required';
export const CSV_COLUMNS = ['nin', 'vnin', 'phone_no', 'client_ref', 'reason'] as const;
const MAX_CLIENT_REF = 100;

/** One row as sent, before validation: every field a string, absent ones empty. */
export type RawRow = { nin: string; vnin: string; phone_no: string; client_ref: string; reason: string; consent?: unknown; malformed?: string };

export type Kind = 'nin' | 'phone' | 'vnin';

/** A row after validation: its lookup key, or why it is invalid. */
export type CheckedRow =
  | { rowNo: number; clientRef: string | null; kind: Kind; value: string; reason: string; fixture: boolean; consent: Consent | null; invalid: null }
  | { rowNo: number; clientRef: string | null; invalid: string };

/** JSON rows: each must be an object of strings; anything else is an invalid row, not a 400. */
export function rowsFromJson(rows: unknown[]): RawRow[] {
  return rows.map((r, i) => {
    const empty: RawRow = { nin: '', vnin: '', phone_no: '', client_ref: '', reason: '' };
    if (typeof r !== 'object' || r === null || Array.isArray(r)) return { ...empty, malformed: 'row must be an object' };
    const o = r as Record<string, unknown>;
    const out: RawRow = { ...empty, ...(o.consent !== undefined ? { consent: o.consent } : {}) };
    for (const k of ['nin', 'vnin', 'phone_no', 'client_ref'] as const) {
      const v = o[k];
      if (v === undefined || v === null) continue;
      if (typeof v !== 'string') return { ...out, client_ref: typeof o.client_ref === 'string' ? o.client_ref : '', malformed: `${k} must be a string` };
      out[k] = v.trim();
    }
    // Checked as sent, before the trim: a tab at the end is a control character here as anywhere.
    if (typeof o.client_ref === 'string') refuseBadText({ client_ref: o.client_ref }, (column) => `rows.${i}.${column}`);
    return out;
  });
}

/**
 * Runs the row text schema (batches.schemas.ts: the rule the JSON rows and the CSV columns share) on
 * one row; a break is a 400 for the whole upload, `where` naming the row and column in its detail.
 */
function refuseBadText(text: { client_ref: string }, where: (column: string) => string): void {
  const p = rowText.safeParse(text);
  if (p.success) return;
  const issue = p.error.issues[0]!;
  throw new AppError('bad_request', `${where(issue.path.map(String).join('.'))}: ${issue.message}`);
}

/**
 * CSV rows, parsed by csv-parse (RFC 4180 quoting, a byte-order mark, CRLF or LF). The header names
 * the columns in any order and case; an absent column is empty, an unknown one is ignored.
 */
export function rowsFromCsv(text: string): RawRow[] {
  let records: string[][];
  try {
    records = parse(text, { bom: true, skip_empty_lines: true, trim: true, relax_column_count: true, max_record_size: 64 * 1024 });
  } catch (err) {
    const line = (err as { lines?: number }).lines;
    // csv-parse's message may quote the data; only where it broke is said.
    throw new AppError('bad_request', `CSV could not be parsed${line ? ` (line ${line})` : ''}: check quoting and delimiters`);
  }
  const header = records.shift();
  if (!header) throw new AppError('bad_request', NO_ROWS);
  const names = header.map((h) => h.toLowerCase());
  const at = Object.fromEntries(CSV_COLUMNS.map((c) => [c, names.indexOf(c)])) as Record<(typeof CSV_COLUMNS)[number], number>;
  if (at.nin < 0 && at.vnin < 0 && at.phone_no < 0) throw new AppError('bad_request', 'CSV header must name at least one of the columns nin, vnin, phone_no');
  if (records.length > MAX_ROWS) throw new AppError('payload_too_large', TOO_MANY_ROWS);
  return records.map((rec, i) => {
    const get = (c: (typeof CSV_COLUMNS)[number]) => (at[c] >= 0 ? (rec[at[c]] ?? '') : '');
    const row: RawRow = { nin: get('nin'), vnin: get('vnin'), phone_no: get('phone_no'), client_ref: get('client_ref'), reason: get('reason') };
    // Rows are numbered as in the results (the first after the header is row 1).
    refuseBadText(row, (column) => `row ${i + 1}, column ${column}`);
    return rec.length > header.length ? { ...row, malformed: 'row has more fields than the header' } : row;
  });
}

/** A row's own consent, checked by the consent rules: the value, or why it breaks them. */
export type ConsentCheck = (value: unknown) => { consent: Consent } | { error: string };

/**
 * Validates every row; `knownReason` says whether a reason key exists. A row's consent is its own,
 * else the batch's (`batchConsent`).
 */
export function checkRows(rows: RawRow[], o: { defaultReason: string | null; knownReason: (key: string) => boolean; batchConsent: Consent | null; checkConsent: ConsentCheck }): CheckedRow[] {
  return rows.map((r, i) => {
    const rowNo = i + 1;
    const clientRef = r.client_ref === '' ? null : r.client_ref.slice(0, MAX_CLIENT_REF);
    const invalid = (why: string): CheckedRow => ({ rowNo, clientRef, invalid: why });
    if (r.malformed) return invalid(r.malformed);
    if (r.client_ref.length > MAX_CLIENT_REF) return invalid(`client_ref must be at most ${MAX_CLIENT_REF} characters`);
    const given = (['nin', 'vnin', 'phone_no'] as const).filter((k) => r[k] !== '');
    if (given.length !== 1) return invalid(ONE_IDENTIFIER);
    const reason = r.reason !== '' ? r.reason : o.defaultReason;
    if (!reason) return invalid('reason is required: a reason column or ?reason=');
    if (!o.knownReason(reason)) return invalid('Invalid reason: use a key from GET /v1/nimc-reasons');
    let consent = o.batchConsent;
    if (r.consent !== undefined) {
      const c = o.checkConsent(r.consent);
      if ('error' in c) return invalid(c.error);
      consent = c.consent;
    }
    const field = given[0]!;
    if (field === 'vnin') {
      // The single call's rule: 16 letters and digits, lower case taken as upper.
      if (!/^[A-Za-z0-9]{16}$/.test(r.vnin)) return invalid(VNIN_INVALID);
      const vnin = r.vnin.toUpperCase();
      return { rowNo, clientRef, kind: 'vnin', value: vnin, reason, fixture: isFixtureVnin(vnin), consent, invalid: null };
    }
    if (field === 'nin') {
      const p = ninBody.shape.nin.safeParse(r.nin);
      if (!p.success) return invalid(p.error.issues[0]!.message);
      return { rowNo, clientRef, kind: 'nin', value: r.nin, reason, fixture: isFixtureNin(r.nin), consent, invalid: null };
    }
    const p = phoneBody.shape.phone_no.safeParse(r.phone_no);
    if (!p.success) return invalid(p.error.issues[0]!.message);
    return { rowNo, clientRef, kind: 'phone', value: r.phone_no, reason, fixture: false, consent, invalid: null };
  });
}

/** A distinct identifier of the batch, looked up once for every row that asks for it. */
export type Lookup = { idx: number; kind: Kind; value: string; reason: string; fixture: boolean; consent: Consent | null; rowCount: number };

/**
 * Groups the valid rows by identifier: the first row's reason and consent are the lookup's, and each later row
 * of the same identifier points at it. Returns the lookups and, per row, its lookup index.
 */
export function dedupe(rows: CheckedRow[]): { lookups: Lookup[]; lookupOf: (number | null)[] } {
  const byKey = new Map<string, Lookup>();
  const lookups: Lookup[] = [];
  const lookupOf = rows.map((r) => {
    if (r.invalid !== null) return null;
    const key = `${r.kind}:${r.value}`;
    let l = byKey.get(key);
    if (!l) {
      l = { idx: lookups.length, kind: r.kind, value: r.value, reason: r.reason, fixture: r.fixture, consent: r.consent, rowCount: 0 };
      byKey.set(key, l);
      lookups.push(l);
    }
    l.rowCount++;
    return l.idx;
  });
  return { lookups, lookupOf };
}
