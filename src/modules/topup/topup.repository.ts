import { randomBytes } from 'node:crypto';
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { CURRENCY } from './pricing.ts';
import { topupRow, type TopupPrice } from './topup.schemas.ts';

export const topupColumns = sql.fragment`
  reference, org_id, user_id, units, bonus_units, unit_cost_kobo, base_amount, vat_amount, service_charge,
  total_amount, currency, status, processor_status, created_at`;

const idRow = z.object({ id: z.coerce.number() });

/** A new top-up's reference (TOPUP_REFERENCE): the organisation and 64 random bits. */
export const newTopupReference = (orgId: number): string => `TOP-${orgId}-${randomBytes(8).toString('hex')}`;

/** A pending top-up at its computed price (checkout and automatic top-ups alike). */
export async function insertTopup(
  db: CommonQueryMethods,
  t: { reference: string; orgId: number; userId: number | null; apiClientId: number | null; units: number; price: TopupPrice; at: Date },
): Promise<void> {
  const p = t.price;
  await db.query(sql.unsafe`
    INSERT INTO topups (reference, org_id, user_id, api_client_id, units, bonus_units, unit_cost_kobo, base_amount, vat_amount,
                        service_charge, total_amount, currency, status, created_at)
    VALUES (${t.reference}, ${t.orgId}, ${t.userId}, ${t.apiClientId}, ${t.units}, ${p.bonus_units}, ${p.unit_cost}, ${p.base_amount},
            ${p.vat_amount}, ${p.service_charge}, ${p.total_amount}, ${CURRENCY}, 'pending', ${sql.timestamp(t.at)})`);
}

export async function setCheckout(db: CommonQueryMethods, reference: string, accessCode: string, authorizationUrl: string): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE topups SET access_code = ${accessCode}, authorization_url = ${authorizationUrl} WHERE reference = ${reference}`);
}

/** The processor never issued a payment link, so nobody can pay this reference. */
export async function markInitializeFailed(db: CommonQueryMethods, reference: string, processorStatus: string): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE topups SET status = 'failed', processor_status = ${processorStatus} WHERE reference = ${reference} AND status = 'pending'`);
}

export async function findTopup(db: CommonQueryMethods, reference: string) {
  return db.maybeOne(sql.type(topupRow)`SELECT ${topupColumns} FROM topups WHERE reference = ${reference}`);
}

export async function recordCheck(db: CommonQueryMethods, reference: string, processorStatus: string, at: Date): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE topups SET processor_status = ${processorStatus}, last_checked_at = ${sql.timestamp(at)}
    WHERE reference = ${reference} AND status IN ('pending', 'failed', 'abandoned', 'amount_mismatch')`);
}

/** Gives up on a pending top-up; the credit path still accepts it should the payer pay after all. */
export async function closeTopup(
  db: CommonQueryMethods,
  reference: string,
  status: 'failed' | 'abandoned',
  processorStatus: string,
  at: Date,
): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE topups SET status = ${status}, processor_status = ${processorStatus}, last_checked_at = ${sql.timestamp(at)}
    WHERE reference = ${reference} AND status = 'pending'`);
  return r.rowCount === 1;
}

export async function markAmountMismatch(
  db: CommonQueryMethods,
  m: { reference: string; paidAmount: number; paidCurrency: string; processorStatus: string; paidAt: Date | null; at: Date },
): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE topups
    SET status = 'amount_mismatch', paid_amount = ${m.paidAmount}, paid_currency = ${m.paidCurrency},
        processor_status = ${m.processorStatus}, last_checked_at = ${sql.timestamp(m.at)},
        paid_at = coalesce(${m.paidAt ? sql.timestamp(m.paidAt) : null}, paid_at)
    WHERE reference = ${m.reference} AND status IN ('pending', 'failed', 'abandoned', 'amount_mismatch')`);
}

/**
 * Claims the credit of a reference. The row lock this takes makes concurrent credits of one
 * reference queue up here; every one after the first finds the row credited and gets null.
 */
export async function claimCredit(db: CommonQueryMethods, m: { reference: string; paidAmount: number; paidCurrency: string; paidAt: Date | null; at: Date }) {
  return db.maybeOne(sql.type(topupRow)`
    UPDATE topups
    SET status = 'credited', credited_at = ${sql.timestamp(m.at)}, last_checked_at = ${sql.timestamp(m.at)},
        paid_amount = ${m.paidAmount}, paid_currency = ${m.paidCurrency}, processor_status = 'success',
        paid_at = coalesce(${m.paidAt ? sql.timestamp(m.paidAt) : null}, paid_at)
    WHERE reference = ${m.reference} AND status IN ('pending', 'failed', 'abandoned')
    RETURNING ${topupColumns}`);
}

/** Stores a processor event once; false when the same signed body was stored before. */
export async function insertProcessorEvent(
  db: CommonQueryMethods,
  e: { eventKey: string; event: string; reference: string | null; payload: unknown; outcome: string | null },
): Promise<boolean> {
  const processed = e.outcome === null ? sql.fragment`NULL` : sql.fragment`now()`;
  const row = await db.maybeOne(sql.type(idRow)`
    INSERT INTO processor_events (event_key, event, reference, payload, processed_at, outcome)
    VALUES (${e.eventKey}, ${e.event}, ${e.reference}, ${sql.jsonb(e.payload as never)}, ${processed}, ${e.outcome})
    ON CONFLICT (event_key) DO NOTHING
    RETURNING id`);
  return row !== null;
}

export async function markEventsProcessed(db: CommonQueryMethods, reference: string, outcome: string): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE processor_events SET processed_at = now(), outcome = ${outcome}
    WHERE reference = ${reference} AND processed_at IS NULL`);
}

/** Pending top-ups inside the sweep window, least recently checked first so a backlog rotates. */
export async function listSweepCandidates(db: CommonQueryMethods, w: { now: Date; minAgeSeconds: number; maxAgeHours: number; limit: number }) {
  return db.anyFirst(sql.type(z.object({ reference: z.string() }))`
    SELECT reference FROM topups
    WHERE status = 'pending'
      AND created_at <= ${sql.timestamp(w.now)} - make_interval(secs => ${w.minAgeSeconds})
      AND created_at > ${sql.timestamp(w.now)} - make_interval(secs => ${w.maxAgeHours * 3600})
    ORDER BY last_checked_at NULLS FIRST, created_at
    LIMIT ${w.limit}`);
}

/** Pending top-ups past the window are given up; a late payment is still credited by webhook or verify. */
export async function abandonExpired(db: CommonQueryMethods, w: { now: Date; maxAgeHours: number; limit: number }): Promise<number> {
  const r = await db.query(sql.unsafe`
    UPDATE topups SET status = 'abandoned', last_checked_at = ${sql.timestamp(w.now)}
    WHERE reference IN (
      SELECT reference FROM topups
      WHERE status = 'pending' AND created_at <= ${sql.timestamp(w.now)} - make_interval(secs => ${w.maxAgeHours * 3600})
      ORDER BY created_at
      LIMIT ${w.limit}
    ) AND status = 'pending'`);
  return r.rowCount;
}
