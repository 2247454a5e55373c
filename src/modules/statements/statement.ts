import type { DatabasePool } from 'slonik';
import { sql } from 'slonik';
import { AppError } from '../../lib/errors.ts';
import { lagosDay, lagosMonth } from '../../lib/lagos-month.ts';
import { requireAccountsKeeper, type Principal } from '../auth/index.ts';
import { requireOrganisation } from '../organisations/index.ts';
import { invoiceNumbers, refundsBetween } from '../topup/index.ts';
import { ledgerMonth } from '../wallet/index.ts';

export type StatementLine =
  | { kind: 'verifications'; date: string; count: number; units: number; fixture_count: number }
  | { kind: 'topup'; date: string; reference: string; invoice: string | null; units: number; bonus_units: number; base: number; vat: number; fee: number; total: number }
  | { kind: 'adjustment'; date: string; units: number; note: string }
  | { kind: 'refund'; date: string; reference: string; amount: number };

/** A month of an organisation's wallet; units are integers, money in kobo (the renderers show naira). */
export type Statement = {
  month: string;
  organisation: string;
  /** The Lagos month as instants: [since, before). */
  since: string;
  before: string;
  opening_units: number;
  closing_units: number;
  /** false while the month is still running: `closing_units` is then the balance so far, on `as_of`. */
  complete: boolean;
  /** The Lagos day the closing balance is for: the month's last, or today for the month in progress. */
  as_of: string;
  lines: StatementLine[];
  totals: { verification_units: number; topup_units: number; adjustment_units: number; movement_units: number; topup_total: number; refund_total: number };
};


/**
 * GET /statements/{yyyy-mm}: opening balance, the month's movements (live verifications summed per
 * day, top-ups with their money and invoice, adjustments, refunded payments) and the closing balance.
 * Read in one REPEATABLE READ transaction, so a line committed meanwhile is in every part or none, and
 * opening + movements = closing holds for what is shown. A month not yet begun is refused.
 */
export async function monthlyStatement(deps: { db: DatabasePool; clock: { now(): Date } }, principal: Principal, month: string): Promise<Statement> {
  const orgId = requireAccountsKeeper(principal);
  const range = lagosMonth(month);
  if (range.since > deps.clock.now()) throw new AppError('bad_request', `month ${month} has not begun (Lagos time)`);
  const org = await requireOrganisation(deps.db, orgId);
  const now = deps.clock.now();
  // Complete a minute after the month's end: a ledger line dated just before it may commit just after.
  const complete = now.getTime() >= range.before.getTime() + 60_000;
  const asOf = lagosDay(new Date(Math.min(now.getTime(), range.before.getTime() - 1)));
  return deps.db.transaction(async (tx) => {
    await tx.query(sql.unsafe`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`);
    const ledger = await ledgerMonth(tx, orgId, range);
    const refunds = await refundsBetween(tx, orgId, range);
    const invoices = await invoiceNumbers(tx, ledger.topups.map((t) => t.reference));
    const lines: StatementLine[] = [
      ...ledger.days.map((d) => ({ kind: 'verifications' as const, date: d.day, count: d.verifications, units: -d.units, fixture_count: d.fixture_verifications })),
      ...ledger.topups.map((t) => ({
        kind: 'topup' as const,
        date: lagosDay(t.created_at),
        reference: t.reference,
        invoice: invoices.get(t.reference) ?? null,
        units: t.units_delta,
        bonus_units: t.bonus_units,
        base: t.amount,
        vat: t.vat_amount,
        fee: t.service_charge,
        total: t.amount + t.vat_amount + t.service_charge,
      })),
      ...ledger.adjustments.map((a) => ({ kind: 'adjustment' as const, date: lagosDay(a.created_at), units: a.units_delta, note: a.note })),
      ...refunds.map((r) => ({ kind: 'refund' as const, date: lagosDay(r.refunded_at), reference: r.reference, amount: r.amount })),
    ];
    // By day; within a day in the order a reader expects: usage, money in, corrections, money back.
    const order = { verifications: 0, topup: 1, adjustment: 2, refund: 3 } as const;
    lines.sort((a, b) => a.date.localeCompare(b.date) || order[a.kind] - order[b.kind]);
    const sum = (xs: number[]) => xs.reduce((n, x) => n + x, 0);
    const verification_units = sum(ledger.days.map((d) => -d.units));
    const topup_units = sum(ledger.topups.map((t) => t.units_delta));
    const adjustment_units = sum(ledger.adjustments.map((a) => a.units_delta));
    return {
      month,
      organisation: org.name,
      since: range.since.toISOString(),
      before: range.before.toISOString(),
      opening_units: ledger.opening,
      closing_units: ledger.closing,
      complete,
      as_of: asOf,
      lines,
      totals: {
        verification_units,
        topup_units,
        adjustment_units,
        movement_units: verification_units + topup_units + adjustment_units,
        topup_total: sum(ledger.topups.map((t) => t.amount + t.vat_amount + t.service_charge)),
        refund_total: sum(refunds.map((r) => r.amount)),
      },
    };
  });
}
