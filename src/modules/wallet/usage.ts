import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { decimal } from '../../lib/pagination.ts';

const DAYS_RULE = 'days must be a whole number from 1 to 366';

export const usageQuery = z.object({
  // An integer in the document (type, bounds and default), parsed from the query string's text as limit is.
  days: z
    .preprocess(
      decimal,
      z
        .number()
        .int(DAYS_RULE)
        .min(1, DAYS_RULE)
        .max(366, DAYS_RULE)
        .default(30),
    )
    .meta({ description: 'How many Lagos calendar days, today included: 1 to 366 (default 30)' }),
});

export const dailyUsage = z
  .object({
    data: z.array(
      z.object({
        day: z.string().meta({ description: 'Lagos calendar day, yyyy-mm-dd', example: '2026-11-24' }),
        units: z.number().int().meta({ description: 'Units debited for live verifications that day' }),
        verifications: z.number().int().meta({ description: 'Ledger lines of live verifications that day' }),
        fixture_verifications: z.number().int().meta({ description: 'Fixture (test mode) calls that day, never charged' }),
      }),
    ),
  })
  .meta({ id: 'DailyUsage', description: 'One entry per day, oldest first, days without activity included as zeros' });

const row = z.object({ day: z.string(), units: z.coerce.number(), verifications: z.coerce.number(), fixture_verifications: z.coerce.number() });

/**
 * Units used per day from the ledger, the one record of charges, in Lagos days (UTC+1 all year):
 * the days are generated in SQL so a quiet day is a zero, not a gap the chart must guess at.
 */
export async function usagePerDay(db: CommonQueryMethods, orgId: number, days: number, now: Date) {
  const rows = await db.any(sql.type(row)`
    WITH days AS (
      SELECT generate_series((${sql.timestamp(now)} AT TIME ZONE 'Africa/Lagos')::date - (${days}::int - 1), (${sql.timestamp(now)} AT TIME ZONE 'Africa/Lagos')::date, interval '1 day')::date AS day
    ),
    used AS (
      SELECT (created_at AT TIME ZONE 'Africa/Lagos')::date AS day,
             -- A compared face match's extra units are units used too (its lookup is the verification counted).
             sum(-units_delta) FILTER (WHERE kind IN ('verification', 'face_match')) AS units,
             count(*) FILTER (WHERE kind = 'verification') AS verifications,
             count(*) FILTER (WHERE kind = 'fixture_verification') AS fixture_verifications
      FROM wallet_transactions
      WHERE org_id = ${orgId} AND kind IN ('verification', 'fixture_verification', 'face_match')
        AND created_at >= ((${sql.timestamp(now)} AT TIME ZONE 'Africa/Lagos')::date - (${days}::int - 1))::timestamp AT TIME ZONE 'Africa/Lagos'
      GROUP BY 1
    )
    SELECT to_char(d.day, 'YYYY-MM-DD') AS day, coalesce(u.units, 0) AS units, coalesce(u.verifications, 0) AS verifications,
           coalesce(u.fixture_verifications, 0) AS fixture_verifications
    FROM days d LEFT JOIN used u USING (day)
    ORDER BY d.day`);
  return { data: rows };
}
