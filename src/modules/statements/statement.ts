import type { DatabasePool } from 'slonik';
import { sql } from 'slonik';
import type { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import { lagosDay, lagosMonth } from '../../lib/lagos-month.ts';
import { requireAccountsKeeper, type Principal } from '../auth/index.ts';
import { requireOrganisation } from '../organisations/index.ts';
import { invoiceNumbers, refundsBetween } from '../topup/index.ts';
import { faceMatchesNote, ledgerMonth } from '../wallet/index.ts';
import type { statementSchema } from './statement.schemas.ts';

/**
 * A month of an organisation's wallet; units are integers, money in kobo (the renderers show naira).
 * The shape is the published schema's (statement.schemas.ts), declared once there.
 */
export type Statement = z.infer<typeof statementSchema>;
export type StatementLine = Statement['lines'][number];
/** Every line: its Lagos day, the instant it happened (a run of verifications: its first), and what it is in words. */
type Dated = Pick<StatementLine, 'date' | 'at' | 'description'>;

/** A line's own fields, without its dating and words (what describeLine reads). */
export type StatementLineBody = StatementLine extends infer L ? (L extends unknown ? Omit<L, keyof Dated> : never) : never;

/** A line in words: the statement's JSON, CSV and PDF say the same. */
export function describeLine(l: StatementLineBody): string {
  switch (l.kind) {
    case 'verifications': {
      const face = faceMatchesNote(l.face_match_count, -l.face_units);
      const free = l.fixture_count ? `; ${l.fixture_count} test-mode call${l.fixture_count === 1 ? '' : 's'} (free)` : '';
      return `${l.count} live verification${l.count === 1 ? '' : 's'}${face ? `, ${face}` : ''}${free}`;
    }
    case 'topup':
      return `Top-up of ${l.units - l.bonus_units} units${l.bonus_units ? ` + ${l.bonus_units} bonus` : ''}${l.invoice ? `, invoice ${l.invoice}` : ''}`;
    case 'adjustment':
      return l.note ? `Adjustment: ${l.note}` : 'Adjustment';
    case 'refund':
      return 'Payment refunded (never credited)';
  }
}

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
    // Each line with what orders it: its instant, then (at one instant) usage, money in, corrections,
    // money back, then the ledger's id (or the refund's reference), so that the order is total and stable.
    const order = { verifications: 0, topup: 1, adjustment: 2, refund: 3 } as const;
    type Keyed = { at: Date; tie: number | string; line: StatementLineBody };
    const keyed: Keyed[] = [
      ...ledger.runs.map((d) => ({
        at: d.first_at,
        tie: d.first_id,
        line: { kind: 'verifications' as const, count: d.verifications, units: -d.units, fixture_count: d.fixture_verifications, face_match_count: d.face_matches, face_units: -d.face_units },
      })),
      ...ledger.topups.map((t) => {
        const total = t.amount + t.vat_amount + t.service_charge;
        const money = { base_kobo: t.amount, vat_kobo: t.vat_amount, fee_kobo: t.service_charge, total_kobo: total, base: t.amount, vat: t.vat_amount, fee: t.service_charge, total };
        return { at: t.created_at, tie: t.id, line: { kind: 'topup' as const, reference: t.reference, invoice: invoices.get(t.reference) ?? null, units: t.units_delta, bonus_units: t.bonus_units, ...money } };
      }),
      ...ledger.adjustments.map((a) => ({ at: a.created_at, tie: a.id, line: { kind: 'adjustment' as const, units: a.units_delta, note: a.note } })),
      ...refunds.map((r) => ({ at: r.refunded_at, tie: r.reference, line: { kind: 'refund' as const, reference: r.reference, amount_kobo: r.amount, amount: r.amount } })),
    ];
    const compareTie = (a: number | string, b: number | string) => (typeof a === 'number' && typeof b === 'number' ? a - b : String(a).localeCompare(String(b)));
    keyed.sort((a, b) => a.at.getTime() - b.at.getTime() || order[a.line.kind] - order[b.line.kind] || compareTie(a.tie, b.tie));
    const lines = keyed.map(({ at, line }) => ({ date: lagosDay(at), at: at.toISOString(), ...line, description: describeLine(line) }) as StatementLine);
    const sum = (xs: number[]) => xs.reduce((n, x) => n + x, 0);
    const verification_units = sum(ledger.runs.map((d) => -d.units));
    const topup_units = sum(ledger.topups.map((t) => t.units_delta));
    const adjustment_units = sum(ledger.adjustments.map((a) => a.units_delta));
    const topupTotal = sum(ledger.topups.map((t) => t.amount + t.vat_amount + t.service_charge));
    const refundTotal = sum(refunds.map((r) => r.amount));
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
        topup_total_kobo: topupTotal,
        refund_total_kobo: refundTotal,
        topup_total: topupTotal,
        refund_total: refundTotal,
      },
    };
  });
}
