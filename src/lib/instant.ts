import { z } from 'zod';

// A date-time with a zone (ISO 8601 / RFC 3339): seconds and their fraction optional, the offset `Z`
// or ±HH:MM (±HHMM too). A time without a zone is refused: in Lagos it is ambiguous by an hour, and
// elsewhere by more. A space where the offset's sign belongs is a `+` the caller left unencoded in a
// query string (`+` decodes to a space there); no other reading of it exists, so it is taken.
export const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:[Zz]|([+\- ])(\d{2}):?(\d{2}))$/;

export const INSTANT_RULE = 'must be an ISO 8601 date-time with a zone (Z or an offset) on a real calendar date, e.g. 2026-03-01T09:30:00Z';

/**
 * The instant a date-time with a zone names, to the millisecond (finer digits are dropped), or null
 * when it is not a real one. `new Date()` rolls 2027-02-30 over to 2 March and reads a time without a
 * zone as local time: each field is checked by building the date back from it (a round trip).
 */
export function instantOf(text: string): Date | null {
  const m = ISO_INSTANT.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi] = [1, 2, 3, 4, 5].map((i) => Number(m[i]));
  const [s, ms] = [Number(m[6] ?? 0), Number((m[7] ?? '').padEnd(3, '0').slice(0, 3))];
  const [offH, offM] = [Number(m[9] ?? 0), Number(m[10] ?? 0)];
  if (h! > 23 || mi! > 59 || s > 59 || offH > 23 || offM > 59) return null;
  const wall = new Date(Date.UTC(y!, mo! - 1, d!, h, mi, s, ms));
  // Date.UTC reads years 0-99 as 1900-1999: the year check refuses them too.
  if (wall.getUTCFullYear() !== y || wall.getUTCMonth() !== mo! - 1 || wall.getUTCDate() !== d) return null;
  const sign = m[8] === '-' ? -1 : 1;
  return new Date(wall.getTime() - sign * (offH * 60 + offM) * 60_000);
}

/**
 * The one schema of an instant the API accepts, in a body or a query string (`expires_at`, a
 * consent's `obtained_at`, a list's `from` and `to` when they are not a day): the text as sent, checked.
 * Callers that need the instant read it with `instantOf`.
 */
export const instant = z
  .string()
  .max(64, INSTANT_RULE)
  // abort: the rules callers chain on (not in the future, ...) may read instantOf(v) as an instant.
  .refine((v) => instantOf(v) !== null, { message: INSTANT_RULE, abort: true })
  .meta({ format: 'date-time', example: '2026-03-01T09:30:00Z' });
