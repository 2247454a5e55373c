import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

const int = z.union([z.number(), z.bigint(), z.string()]).transform((v) => Number(v));
const time = z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v));

const balanceRow = z.object({ opening: int, closing: int });
const runRow = z.object({
  day: z.string(),
  first_at: time,
  first_id: int,
  verifications: int,
  units: int,
  fixture_verifications: int,
  face_matches: int,
  face_units: int,
});
const creditRow = z.object({
  id: int,
  created_at: time,
  reference: z.string(),
  units_delta: int,
  amount: int,
  vat_amount: int,
  service_charge: int,
  units: int,
  bonus_units: int,
});
const adjustmentRow = z.object({ id: int, created_at: time, units_delta: int, note: z.string() });

export type LedgerMonth = {
  /** The balance after the last line before the month (0 before the first line). */
  opening: number;
  /** The balance after the month's last line (the opening when there is none). */
  closing: number;
  /**
   * Live verifications (debits) and the fixture calls beside them (never charged), summed per run: the
   * lines of one Lagos day between two other lines (a top-up or an adjustment), in time order, so
   * that a statement lists every line in the order it happened. A face match's debit is in its
   * lookup's run, whatever was written between the two.
   */
  runs: z.infer<typeof runRow>[];
  topups: z.infer<typeof creditRow>[];
  adjustments: z.infer<typeof adjustmentRow>[];
};

/**
 * One organisation's ledger over [since, before): the balances at both ends and every movement
 * between, read in one REPEATABLE READ snapshot's worth of statements by the caller's transaction,
 * so that a line committed meanwhile is in all of them or none. A line belongs to the month its
 * created_at falls in; the balances are the chain's (units_after by id), so opening + movements =
 * closing is the ledger's own invariant, which a statement's test checks.
 */
export async function ledgerMonth(db: CommonQueryMethods, orgId: number, range: { since: Date; before: Date }): Promise<LedgerMonth> {
  const since = sql.timestamp(range.since);
  const before = sql.timestamp(range.before);
  const balances = await db.one(sql.type(balanceRow)`
    -- Sums of the lines dated before each boundary, not the balance after the last line by id: ids
    -- follow the wallet lock's order while created_at is each transaction's start, so a credit begun
    -- at 23:59:59 and committed after the next month's first debits would otherwise put those debits
    -- in this month's closing balance. By sums, opening + movements = closing by construction.
    SELECT coalesce(sum(units_delta) FILTER (WHERE created_at < ${since}), 0) AS opening,
           coalesce(sum(units_delta), 0) AS closing
    FROM wallet_transactions WHERE org_id = ${orgId} AND created_at < ${before}`);
  const runs = await db.any(sql.type(runRow)`
    WITH month AS (
      SELECT id, created_at, kind, units_delta, reference,
             -- Which run a line is in: the count of top-ups and adjustments up to it, in time order.
             count(*) FILTER (WHERE kind IN ('topup', 'adjustment')) OVER (ORDER BY created_at, id) AS run
      FROM wallet_transactions
      WHERE org_id = ${orgId} AND created_at >= ${since} AND created_at < ${before}
    ), lookups AS (
      SELECT DISTINCT ON (reference) reference, created_at, run
      FROM month WHERE kind = 'verification' AND reference IS NOT NULL
      ORDER BY reference, id
    ), placed AS (
      -- A face match's debit is written after its lookup's, in a statement of its own: a top-up or an
      -- adjustment committed between the two would start a new run and show the comparison without
      -- its lookup ("0 live verifications, 1 with face match"). It is placed in its lookup's run and
      -- day (same reference); one whose lookup is in an earlier month keeps its own.
      SELECT m.id, m.kind, m.units_delta, m.created_at,
             coalesce(l.created_at, m.created_at) AS placed_at, coalesce(l.run, m.run) AS run
      FROM month m LEFT JOIN lookups l ON m.kind = 'face_match' AND l.reference = m.reference
      WHERE m.kind IN ('verification', 'fixture_verification', 'face_match')
    )
    SELECT to_char((placed_at AT TIME ZONE 'Africa/Lagos')::date, 'YYYY-MM-DD') AS day,
           min(created_at) AS first_at, min(id) AS first_id,
           count(*) FILTER (WHERE kind = 'verification') AS verifications,
           -- A face match's comparison is a debit of its own (face_match) beside its lookup's: the run's
           -- units are both, so that opening + movements = closing.
           coalesce(sum(-units_delta) FILTER (WHERE kind IN ('verification', 'face_match')), 0) AS units,
           count(*) FILTER (WHERE kind = 'fixture_verification') AS fixture_verifications,
           count(*) FILTER (WHERE kind = 'face_match') AS face_matches,
           coalesce(sum(-units_delta) FILTER (WHERE kind = 'face_match'), 0) AS face_units
    FROM placed
    GROUP BY 1, run ORDER BY min(created_at), min(id)`);
  const topups = await db.any(sql.type(creditRow)`
    SELECT id, created_at, reference, units_delta, amount, coalesce(vat_amount, 0) AS vat_amount, coalesce(service_charge, 0) AS service_charge,
           coalesce((details->>'units')::bigint, units_delta) AS units, coalesce((details->>'bonus_units')::bigint, 0) AS bonus_units
    FROM wallet_transactions
    WHERE org_id = ${orgId} AND kind = 'topup' AND created_at >= ${since} AND created_at < ${before}
    ORDER BY id`);
  const adjustments = await db.any(sql.type(adjustmentRow)`
    SELECT id, created_at, units_delta, coalesce(details->>'note', '') AS note
    FROM wallet_transactions
    WHERE org_id = ${orgId} AND kind = 'adjustment' AND created_at >= ${since} AND created_at < ${before}
    ORDER BY id`);
  return { ...balances, runs: [...runs], topups: [...topups], adjustments: [...adjustments] };
}
