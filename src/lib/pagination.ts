import { z } from 'zod';
import { AppError } from './errors.ts';
import { instant, instantOf, ISO_INSTANT } from './instant.ts';

// Every history list (ledger, top-ups, verifications) pages the same way: newest first, `limit`
// rows, and an opaque `next_cursor` that names the last row returned. Keyset pagination, not
// OFFSET: a row inserted while a client walks the pages lands before its cursor, so the walk
// neither repeats nor skips a row that existed when it started.

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

// Query values arrive as strings: a decimal string becomes a number and is judged by the rule
// (limit=500 is 400), anything else stays a string so zod reports a wrong type (limit=abc is 422).
export const decimal = (v: unknown): unknown => (typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v) ? Number(v) : v);

export const limitParam = z.preprocess(
  decimal,
  z
    .number()
    .int('limit must be an integer between 1 and 200')
    .min(1, 'limit must be an integer between 1 and 200')
    .max(MAX_LIMIT, 'limit must be an integer between 1 and 200')
    .default(DEFAULT_LIMIT),
);

const ISO_DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_OR_INSTANT = new RegExp(`${ISO_DAY.source}|${ISO_INSTANT.source}`);

/**
 * A bound of a list's time range: a real calendar day written YYYY-MM-DD (a whole Lagos day), or an
 * instant (the API's one instant schema, instant.ts). The messages of a malformed day predate the second form.
 */
export const timeBoundParam = (field: string) =>
  z
    .string()
    // A pattern, not a refinement: the OpenAPI document shows it (the calendar checks below cannot be shown).
    .regex(DAY_OR_INSTANT, `${field} must be a date YYYY-MM-DD or a date-time with a zone, e.g. 2026-03-01T09:30:00Z`)
    .refine((v) => !ISO_DAY.test(v) || lagosDayStart(v) !== null, `${field} is not a valid calendar date`)
    .refine((v) => !ISO_INSTANT.test(v) || instant.safeParse(v).success, `${field} is not a valid date and time`);

// Africa/Lagos has been UTC+1 all year since 1919 (no daylight saving): a fixed offset is exact.
const LAGOS_OFFSET_MS = 3600 * 1000;

/** The instant a Lagos calendar day begins, or null when the text is not a real day. */
function lagosDayStart(day: string, plusDays = 0): Date | null {
  const m = ISO_DAY.exec(day);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const utc = new Date(Date.UTC(y, mo - 1, d));
  if (utc.getUTCFullYear() !== y || utc.getUTCMonth() !== mo - 1 || utc.getUTCDate() !== d) return null;
  return new Date(Date.UTC(y, mo - 1, d + plusDays) - LAGOS_OFFSET_MS);
}

export type TimeRange = { since: Date | null; before: Date | null };

/**
 * The rows a list's `from` and `to` take in, as [since, before). A day is an inclusive Lagos day:
 * `from` its start, `to` the start of the day after. An instant is inclusive too: `to` takes in its
 * whole millisecond, so passing an event's own `at` keeps that event. Callers pass validated bounds.
 */
export function lagosRange(from: string | undefined, to: string | undefined): TimeRange {
  const since = from ? (ISO_DAY.test(from) ? lagosDayStart(from) : instantOf(from)) : null;
  const last = to && !ISO_DAY.test(to) ? instantOf(to) : null;
  const before = to && ISO_DAY.test(to) ? lagosDayStart(to, 1) : last && new Date(last.getTime() + 1);
  if (since && before && since >= before) throw new AppError('bad_request', 'from must not be after to');
  return { since, before };
}

/** A cursor's values; `scope` keeps a cursor of one list from being replayed on another. */
export function encodeCursor(scope: string, values: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify([scope, ...values]), 'utf8').toString('base64url');
}

export const INVALID_CURSOR = 'invalid cursor';

/**
 * A cursor's timestamp (microseconds, UTC) that names a real instant PostgreSQL can hold: the
 * pattern alone lets `9999-99-99T...` or year 0 through, which the database refuses (22008).
 */
export const cursorTimestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/)
  .refine((v) => {
    const at = new Date(`${v.slice(0, 23)}Z`);
    return !Number.isNaN(at.getTime()) && at.getUTCFullYear() >= 1 && at.toISOString().slice(0, 19) === v.slice(0, 19);
  });

/** The values of a cursor issued by `encodeCursor(scope, ...)`; 400 for anything else. */
export function decodeCursor<T extends z.ZodTuple>(scope: string, cursor: string, shape: T): z.infer<T> {
  let parsed: unknown;
  try {
    if (!/^[A-Za-z0-9_-]{1,400}$/.test(cursor)) throw new Error('not base64url');
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new AppError('bad_request', INVALID_CURSOR);
  }
  if (!Array.isArray(parsed) || parsed[0] !== scope) throw new AppError('bad_request', INVALID_CURSOR);
  const values = shape.safeParse(parsed.slice(1));
  if (!values.success) throw new AppError('bad_request', INVALID_CURSOR);
  return values.data;
}

/** Cuts the extra row a page query reads to learn whether another page follows. */
export function pageOf<R, C>(rows: readonly R[], limit: number, cursorOf: (last: R) => C): { data: R[]; next: C | null } {
  const data = rows.slice(0, limit);
  return { data, next: rows.length > limit ? cursorOf(data[data.length - 1]!) : null };
}

export const cursorParam = z.string().max(400, INVALID_CURSOR).optional();
