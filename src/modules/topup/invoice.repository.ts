import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

export type Buyer = { name: string; address: string | null; tin: string | null };

/**
 * Gives a credited top-up its invoice number, in the credit's own transaction. The year's counter row
 * is taken by this one statement (insert, or bump when it exists), so concurrent credits queue on its
 * lock until each commits: two never read the same number, and a credit that rolls back undoes its
 * bump, so no number is skipped. The caller takes it after the wallet row and before the audit head
 * (book.ts), keeping the time the service-wide row is held to the end of the transaction.
 */
export async function issueInvoice(tx: CommonQueryMethods, i: { reference: string; orgId: number; at: Date; buyer: Buyer }): Promise<string> {
  return tx.oneFirst(sql.type(z.object({ number: z.string() }))`
    WITH next AS (
      INSERT INTO invoice_counters AS c (year, last_number)
      VALUES (extract(year FROM ${sql.timestamp(i.at)} AT TIME ZONE 'Africa/Lagos')::int, 1)
      ON CONFLICT (year) DO UPDATE SET last_number = c.last_number + 1
      RETURNING year, last_number
    )
    INSERT INTO invoices (number, year, seq, topup_reference, org_id, issued_at, buyer_name, buyer_address, buyer_tin)
    SELECT 'INV-' || year::text || '-' || lpad(last_number::text, 6, '0'), year, last_number,
           ${i.reference}, ${i.orgId}, ${sql.timestamp(i.at)}, ${i.buyer.name}, ${i.buyer.address}, ${i.buyer.tin}
    FROM next
    RETURNING number`);
}

// Timestamps arrive as numbers (the pool's parsers), strings or dates.
const time = z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v));

export const invoiceRow = z.object({
  number: z.string(),
  org_id: z.coerce.number(),
  reference: z.string(),
  issued_at: time,
  credited_at: time,
  /** The processor's time of payment; the credit's for rows credited before it was kept. */
  paid_at: time,
  buyer_name: z.string(),
  buyer_address: z.string().nullable(),
  buyer_tin: z.string().nullable(),
  units: z.number(),
  bonus_units: z.number(),
  unit_cost_kobo: z.number(),
  base_amount: z.coerce.number(),
  vat_amount: z.coerce.number(),
  service_charge: z.coerce.number(),
  total_amount: z.coerce.number(),
  currency: z.string(),
});
export type InvoiceRow = z.infer<typeof invoiceRow>;

/** The invoice of a top-up with the amounts it invoices; null when the top-up has none (not credited). */
export async function findInvoice(db: CommonQueryMethods, reference: string): Promise<InvoiceRow | null> {
  return db.maybeOne(sql.type(invoiceRow)`
    SELECT i.number, i.org_id, t.reference, i.issued_at, t.credited_at, coalesce(t.paid_at, t.credited_at) AS paid_at, i.buyer_name, i.buyer_address, i.buyer_tin,
           t.units, t.bonus_units, t.unit_cost_kobo, t.base_amount, t.vat_amount, t.service_charge, t.total_amount, t.currency
    FROM invoices i JOIN topups t ON t.reference = i.topup_reference
    WHERE i.topup_reference = ${reference}`);
}

/** The invoice numbers of these top-ups (a statement's top-up lines), by reference. */
export async function invoiceNumbers(db: CommonQueryMethods, references: readonly string[]): Promise<Map<string, string>> {
  if (references.length === 0) return new Map();
  const rows = await db.any(sql.type(z.object({ topup_reference: z.string(), number: z.string() }))`
    SELECT topup_reference, number FROM invoices WHERE topup_reference = ANY(${sql.array([...references], 'text')})`);
  return new Map(rows.map((r) => [r.topup_reference, r.number]));
}

const refundRow = z.object({ reference: z.string(), refunded_at: time, amount: z.coerce.number() });
export type RefundLine = z.infer<typeof refundRow>;

/**
 * Payments given back in [since, before): top-ups refunded by the processor (never credited, so no
 * ledger line; a statement lists them beside the units).
 */
export async function refundsBetween(db: CommonQueryMethods, orgId: number, range: { since: Date; before: Date }): Promise<RefundLine[]> {
  const rows = await db.any(sql.type(refundRow)`
    SELECT reference, refunded_at, coalesce(refund_amount, paid_amount, total_amount) AS amount
    FROM topups
    WHERE org_id = ${orgId} AND status = 'refunded' AND refunded_at >= ${sql.timestamp(range.since)} AND refunded_at < ${sql.timestamp(range.before)}
    ORDER BY refunded_at, reference`);
  return [...rows];
}
