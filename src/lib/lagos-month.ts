import { z } from 'zod';
import { AppError } from './errors.ts';

// Months as Nigeria reads them: statements, their monthly e-mail and the alerts that link them all
// count months in Lagos time, which is UTC+1 all year (no daylight saving), so a fixed hour is exact.
const LAGOS_OFFSET_MS = 3600_000;

// From 2000-01: Date.UTC reads years 0-99 as 1900-1999, and no ledger line is older than the service anyway.
export const MONTH = /^([2-9]\d{3})-(0[1-9]|1[0-2])$/;
export const MONTH_RULE = 'month must be yyyy-mm from 2000-01 (e.g. 2026-11)';

/** A path naming a month (`GET /statements/{month}`): the route's check and the OpenAPI document's pattern. */
export const monthPathParams = z.object({
  month: z.string().regex(MONTH, MONTH_RULE).meta({ description: 'yyyy-mm from 2000-01, Lagos time; not a month yet to begin', example: '2026-11' }),
});

/** The Lagos month `yyyy-mm` as instants: [since, before). */
export function lagosMonth(month: string): { since: Date; before: Date } {
  const m = MONTH.exec(month);
  if (!m) throw new AppError('bad_request', MONTH_RULE);
  const year = Number(m[1]);
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
