import type { DatabasePool } from 'slonik';
import { sql } from 'slonik';
import { AppError } from '../../lib/errors.ts';
import { requireAccountsKeeper, type Principal } from '../auth/index.ts';
import { requireOrganisation } from '../organisations/index.ts';
import { invoiceNumbers, refundsBetween } from '../topup/index.ts';
import { ledgerMonth } from '../wallet/index.ts';

export const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

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
  lines: StatementLine[];
  totals: { verification_units: number; topup_units: number; adjustment_units: number; movement_units: number; topup_total: number; refund_total: number };
};

/** The Lagos month `yyyy-mm` as instants (Lagos is UTC+1 all year, no daylight saving). */
export function lagosMonth(month: string): { since: Date; before: Date } {
  const m = MONTH.exec(month);
  if (!m) throw new AppError('bad_request', 'month must be yyyy-mm (e.g. 2026-11)');
  const year = Number(m[1]);
  // Date.UTC reads years 0-99 as 1900-1999; no ledger line is older than the service anyway.
  if (year < 2000) throw new AppError('bad_request', 'month must be yyyy-mm from 2000-01 (e.g. 2026-11)');
  const index = Number(m[2]) - 1;
  return { since: new Date(Date.UTC(year, index, 1) - 3600_000), before: new Date(Date.UTC(year, index + 1, 1) - 3600_000) };
}

const lagosDay = (d: Date) => new Date(d.getTime() + 3600_000).toISOString().slice(0, 10);

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
