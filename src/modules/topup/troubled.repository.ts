import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { topupColumns } from './topup.repository.ts';
import { topupRow } from './topup.schemas.ts';

/** Top-ups off the happy path: refunds, chargebacks, resolved mismatches, closed and re-checked links. */

// States a payment can still land in and be decided from; the others are settled one way or another.
const OPEN = sql.fragment`('pending', 'failed', 'abandoned', 'amount_mismatch')`;

const int = z.union([z.number(), z.bigint(), z.string()]).transform((v) => Number(v));

export const refundRow = z.object({
  reference: z.string(),
  org_id: int,
  status: z.string(),
  paid_amount: int.nullable(),
  paid_currency: z.string().nullable(),
  refund_id: z.string().nullable(),
  refund_status: z.string().nullable(),
  refund_error: z.string().nullable(),
  refund_amount: int.nullable(),
});
export type RefundRow = z.infer<typeof refundRow>;

export async function findRefundRow(db: CommonQueryMethods, reference: string) {
  return db.maybeOne(sql.type(refundRow)`
    SELECT reference, org_id, status, paid_amount, paid_currency, refund_id, refund_status, refund_error, refund_amount
    FROM topups WHERE reference = ${reference}`);
}

/** A paid top-up that must not be credited; true when this call moved it (so it is reported once). */
export async function markRefundDue(
  db: CommonQueryMethods,
  m: { reference: string; paidAmount: number; paidCurrency: string; processorStatus: string; at: Date },
): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE topups
    SET status = 'refund_due', paid_amount = ${m.paidAmount}, paid_currency = ${m.paidCurrency},
        processor_status = ${m.processorStatus}, last_checked_at = ${sql.timestamp(m.at)}
    WHERE reference = ${m.reference} AND status IN ${OPEN}`);
  return r.rowCount === 1;
}

export async function markChargedBack(db: CommonQueryMethods, reference: string, at: Date): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE topups SET status = 'charged_back', charged_back_at = ${sql.timestamp(at)}, processor_status = 'reversed',
                      last_checked_at = ${sql.timestamp(at)}
    WHERE reference = ${reference} AND status = 'credited'`);
  return r.rowCount === 1;
}

/** The claim that makes one command the sender: only one run moves refund_due to refunding. */
export async function claimRefund(db: CommonQueryMethods, reference: string, at: Date): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE topups SET status = 'refunding', refund_claimed_at = ${sql.timestamp(at)}, refund_error = NULL
    WHERE reference = ${reference} AND status = 'refund_due'`);
  return r.rowCount === 1;
}

/** Records what the processor said about a claimed refund; only a `refunding` row moves. */
export async function settleRefund(
  db: CommonQueryMethods,
  s: { reference: string; status: 'refunded' | 'refunding' | 'refund_due'; refundId: string | null; refundStatus: string | null; amount: number | null; error: string | null; at: Date },
): Promise<boolean> {
  const refundedAt = s.status === 'refunded' ? sql.fragment`${sql.timestamp(s.at)}` : sql.fragment`NULL`;
  const r = await db.query(sql.unsafe`
    UPDATE topups
    SET status = ${s.status}, refund_id = coalesce(${s.refundId}, refund_id), refund_status = coalesce(${s.refundStatus}, refund_status),
        refund_amount = coalesce(${s.amount}, refund_amount), refund_error = ${s.error}, refunded_at = ${refundedAt},
        last_checked_at = ${sql.timestamp(s.at)}
    WHERE reference = ${s.reference} AND status = 'refunding'`);
  return r.rowCount === 1;
}

/** Claimed refunds old enough that no command is still sending them, least recently checked first. */
export async function listStaleRefunding(db: CommonQueryMethods, w: { now: Date; minAgeSeconds: number; limit: number }) {
  return db.anyFirst(sql.type(z.object({ reference: z.string() }))`
    SELECT reference FROM topups
    WHERE status = 'refunding' AND refund_claimed_at <= ${sql.timestamp(w.now)} - make_interval(secs => ${w.minAgeSeconds})
    ORDER BY last_checked_at NULLS FIRST
    LIMIT ${w.limit}`);
}

/** An operator's decision on an amount mismatch: to be refunded. */
export async function resolveToRefund(db: CommonQueryMethods, r: { reference: string; by: string; note: string; at: Date }): Promise<boolean> {
  const u = await db.query(sql.unsafe`
    UPDATE topups SET status = 'refund_due', resolved_at = ${sql.timestamp(r.at)}, resolved_by = ${r.by}, resolution_note = ${r.note}
    WHERE reference = ${r.reference} AND status = 'amount_mismatch'`);
  return u.rowCount === 1;
}

/** An operator's decision on an amount mismatch: credited as initialised, which the schema admits once resolved. */
export async function claimResolvedCredit(db: CommonQueryMethods, r: { reference: string; by: string; note: string; at: Date }) {
  return db.maybeOne(sql.type(topupRow)`
    UPDATE topups
    SET status = 'credited', credited_at = ${sql.timestamp(r.at)}, resolved_at = ${sql.timestamp(r.at)},
        resolved_by = ${r.by}, resolution_note = ${r.note}
    WHERE reference = ${r.reference} AND status = 'amount_mismatch'
    RETURNING ${topupColumns}`);
}

export async function countPending(db: CommonQueryMethods, orgId: number): Promise<number> {
  return Number(await db.oneFirst(sql.type(z.object({ n: int }))`SELECT count(*) AS n FROM topups WHERE org_id = ${orgId} AND status = 'pending'`));
}

/**
 * Closes an organisation's open payment links as abandoned: a payment that still arrives is caught
 * by the webhook or the daily re-check, and, the organisation being retired, becomes refund_due.
 */
export async function closePending(db: CommonQueryMethods, orgId: number, at: Date): Promise<number> {
  const r = await db.query(sql.unsafe`
    UPDATE topups SET status = 'abandoned', processor_status = 'closed_org_retired', last_checked_at = ${sql.timestamp(at)}
    WHERE org_id = ${orgId} AND status = 'pending'`);
  return r.rowCount;
}

/** Abandoned top-ups young enough to re-check and not checked within `minGapHours`. */
export async function listRecheckCandidates(db: CommonQueryMethods, w: { now: Date; maxAgeDays: number; minGapHours: number; limit: number }) {
  return db.anyFirst(sql.type(z.object({ reference: z.string() }))`
    SELECT reference FROM topups
    WHERE status = 'abandoned'
      AND created_at > ${sql.timestamp(w.now)} - make_interval(days => ${w.maxAgeDays})
      AND (last_checked_at IS NULL OR last_checked_at <= ${sql.timestamp(w.now)} - make_interval(secs => ${w.minGapHours * 3600}))
    ORDER BY created_at
    LIMIT ${w.limit}`);
}
