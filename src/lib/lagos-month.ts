import { AppError } from './errors.ts';

// Months as Nigeria reads them: statements, their monthly e-mail and the alerts that link them all
// count months in Lagos time, which is UTC+1 all year (no daylight saving), so a fixed hour is exact.
const LAGOS_OFFSET_MS = 3600_000;

export const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** The Lagos month `yyyy-mm` as instants: [since, before). */
export function lagosMonth(month: string): { since: Date; before: Date } {
  const m = MONTH.exec(month);
  if (!m) throw new AppError('bad_request', 'month must be yyyy-mm (e.g. 2026-11)');
  const year = Number(m[1]);
  // Date.UTC reads years 0-99 as 1900-1999; no ledger line is older than the service anyway.
  if (year < 2000) throw new AppError('bad_request', 'month must be yyyy-mm from 2000-01 (e.g. 2026-11)');
  const index = Number(m[2]) - 1;
  return { since: new Date(Date.UTC(year, index, 1) - LAGOS_OFFSET_MS), before: new Date(Date.UTC(year, index + 1, 1) - LAGOS_OFFSET_MS) };
}

/** The Lagos month an instant falls in, as `yyyy-mm`. */
export function lagosMonthOf(at: Date): string {
  return new Date(at.getTime() + LAGOS_OFFSET_MS).toISOString().slice(0, 7);
}

/** The Lagos month before the one `at` falls in: the month that has ended. */
export function previousLagosMonth(at: Date): string {
  const lagos = new Date(at.getTime() + LAGOS_OFFSET_MS);
  return new Date(Date.UTC(lagos.getUTCFullYear(), lagos.getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
}

/** The Lagos calendar day of an instant, `yyyy-mm-dd`. */
export const lagosDay = (at: Date): string => new Date(at.getTime() + LAGOS_OFFSET_MS).toISOString().slice(0, 10);
