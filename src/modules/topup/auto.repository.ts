import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

// Automatic top-up's two tables (migration 1732200330000): an organisation's settings, and its charges.
// A charge is queued by the debit itself (the trigger on wallets); everything after is here.

const time = z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v));
const int = z.coerce.number();

export const settingsRow = z.object({
  org_id: int,
  enabled: z.boolean(),
  below_units: int,
  units: int,
  max_per_day: int,
  turned_off_reason: z.literal('card_declined').nullable(),
  turned_off_at: time.nullable(),
  updated_at: time,
});
export type SettingsRow = z.infer<typeof settingsRow>;

export async function findSettings(db: CommonQueryMethods, orgId: number): Promise<SettingsRow | null> {
  return db.maybeOne(sql.type(settingsRow)`
    SELECT org_id, enabled, below_units, units, max_per_day, turned_off_reason, turned_off_at, updated_at
    FROM auto_topup_settings WHERE org_id = ${orgId}`);
}

/** A person's choice replaces the last one, and with it the service's note that it had turned it off. */
export async function saveSettings(
  tx: CommonQueryMethods,
  s: { orgId: number; enabled: boolean; belowUnits: number; units: number; maxPerDay: number; userId: number | null; at: Date },
): Promise<void> {
  await tx.query(sql.unsafe`
    INSERT INTO auto_topup_settings (org_id, enabled, below_units, units, max_per_day, turned_off_reason, turned_off_at, updated_by, updated_at)
    VALUES (${s.orgId}, ${s.enabled}, ${s.belowUnits}, ${s.units}, ${s.maxPerDay}, NULL, NULL, ${s.userId}, ${sql.timestamp(s.at)})
    ON CONFLICT (org_id) DO UPDATE SET
      enabled = EXCLUDED.enabled, below_units = EXCLUDED.below_units, units = EXCLUDED.units, max_per_day = EXCLUDED.max_per_day,
      turned_off_reason = NULL, turned_off_at = NULL, updated_by = EXCLUDED.updated_by, updated_at = EXCLUDED.updated_at`);
}

/** The card was declined: automatic top-up stays off until a person turns it on again. */
export async function turnOffForDecline(tx: CommonQueryMethods, orgId: number, at: Date): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE auto_topup_settings SET enabled = false, turned_off_reason = 'card_declined', turned_off_at = ${sql.timestamp(at)}
    WHERE org_id = ${orgId} AND enabled`);
}

export const chargeStatus = z.enum(['queued', 'charging', 'credited', 'declined', 'failed', 'skipped']);

export const chargeRow = z.object({
  id: int,
  org_id: int,
  status: chargeStatus,
  units: int,
  below_units: int,
  balance_units: int,
  reference: z.string().nullable(),
  card: z.string().nullable(),
  card_reference: z.string().nullable(),
  detail: z.string().nullable(),
  created_at: time,
});
export type ChargeRow = z.infer<typeof chargeRow>;

const chargeColumns = sql.fragment`id, org_id, status, units, below_units, balance_units, reference, card, card_reference, detail, created_at`;

export async function findCharge(db: CommonQueryMethods, id: number): Promise<ChargeRow | null> {
  return db.maybeOne(sql.type(chargeRow)`SELECT ${chargeColumns} FROM auto_topup_charges WHERE id = ${id}`);
}

/** The automatic charge that bought this top-up, if one did (read by the credit, for its receipt). */
export async function findChargeOf(db: CommonQueryMethods, reference: string): Promise<ChargeRow | null> {
  return db.maybeOne(sql.type(chargeRow)`SELECT ${chargeColumns} FROM auto_topup_charges WHERE reference = ${reference}`);
}

/** The organisation's charge waiting for a worker (at most one: the in-flight index). */
export async function queuedChargeIds(db: CommonQueryMethods, orgId: number): Promise<readonly number[]> {
  return db.anyFirst(sql.type(z.object({ id: int }))`SELECT id FROM auto_topup_charges WHERE org_id = ${orgId} AND status = 'queued'`);
}

/** Charges still waiting, oldest first: the sweep enqueues those whose job was lost (a debit from outside a worker, Redis emptied). */
export async function listQueuedCharges(db: CommonQueryMethods, limit: number): Promise<readonly number[]> {
  return db.anyFirst(sql.type(z.object({ id: int }))`SELECT id FROM auto_topup_charges WHERE status = 'queued' ORDER BY id LIMIT ${limit}`);
}

/** Claims the charge for the top-up just created in the same transaction; null when another run claimed it first. */
export async function startCharge(tx: CommonQueryMethods, c: { id: number; reference: string; card: string; cardReference: string }): Promise<ChargeRow | null> {
  return tx.maybeOne(sql.type(chargeRow)`
    UPDATE auto_topup_charges SET status = 'charging', reference = ${c.reference}, card = ${c.card}, card_reference = ${c.cardReference}
    WHERE id = ${c.id} AND status = 'queued'
    RETURNING ${chargeColumns}`);
}

/** Nothing was charged: automatic top-up was turned off meanwhile, or there is no card it may charge. */
export async function skipCharge(db: CommonQueryMethods, id: number, detail: string, at: Date): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE auto_topup_charges SET status = 'skipped', detail = ${detail.slice(0, 300)}, ended_at = ${sql.timestamp(at)}
    WHERE id = ${id} AND status = 'queued'`);
  return r.rowCount === 1;
}

export async function endCharge(tx: CommonQueryMethods, c: { id: number; status: 'declined' | 'failed'; detail: string; at: Date }): Promise<boolean> {
  const r = await tx.query(sql.unsafe`
    UPDATE auto_topup_charges SET status = ${c.status}, detail = ${c.detail.slice(0, 300)}, ended_at = ${sql.timestamp(c.at)}
    WHERE id = ${c.id} AND status = 'charging'`);
  return r.rowCount === 1;
}

/**
 * In the credit's own transaction, after the wallet row: the charge is over once its units are in.
 * Whichever path credits (this charge's worker, the webhook, the sweep after a crash), the same.
 */
export async function markChargeCredited(tx: CommonQueryMethods, reference: string, at: Date): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE auto_topup_charges SET status = 'credited', detail = NULL, ended_at = ${sql.timestamp(at)}
    WHERE reference = ${reference} AND status <> 'credited'`);
}

/**
 * Charges whose top-up the top-up sweep has settled without a credit (closed as failed or abandoned,
 * held as a mismatch): over, so that the organisation's next charge may be queued.
 */
export async function endSettledCharges(db: CommonQueryMethods, at: Date): Promise<number> {
  const r = await db.query(sql.unsafe`
    UPDATE auto_topup_charges c SET status = 'failed', detail = 'top-up ' || t.status || ' (' || coalesce(t.processor_status, 'no answer') || ')', ended_at = ${sql.timestamp(at)}
    FROM topups t
    WHERE c.reference = t.reference AND c.status = 'charging' AND t.status NOT IN ('pending', 'credited')`);
  return r.rowCount;
}

/** Queued charges no worker started within the hour (their job failed for good): given up, so the next debit may queue another. */
export async function skipStaleCharges(db: CommonQueryMethods, at: Date): Promise<number> {
  const r = await db.query(sql.unsafe`
    UPDATE auto_topup_charges SET status = 'skipped', detail = 'not started within an hour', ended_at = ${sql.timestamp(at)}
    WHERE status = 'queued' AND created_at < ${sql.timestamp(at)} - interval '1 hour'`);
  return r.rowCount;
}

/** What counts against max_per_day today (Lagos): every charge but the skipped ones, as the trigger counts. */
export async function chargesToday(db: CommonQueryMethods, orgId: number): Promise<number> {
  return db.oneFirst(sql.type(z.object({ n: int }))`
    SELECT count(*) AS n FROM auto_topup_charges
    WHERE org_id = ${orgId} AND lagos_day = (now() AT TIME ZONE 'Africa/Lagos')::date AND status <> 'skipped'`);
}

const recentChargeRow = chargeRow.extend({ total_amount: int.nullable() });

/**
 * The organisation's latest charges, newest first (the settings answer shows them), each with what
 * its top-up asks of the card (base + VAT + processor fee, fixed when the charge started; null
 * before it started or when it was skipped).
 */
export async function recentCharges(db: CommonQueryMethods, orgId: number, limit: number): Promise<readonly z.infer<typeof recentChargeRow>[]> {
  return db.any(sql.type(recentChargeRow)`
    SELECT c.id, c.org_id, c.status, c.units, c.below_units, c.balance_units, c.reference, c.card, c.card_reference, c.detail, c.created_at,
           t.total_amount
    FROM auto_topup_charges c LEFT JOIN topups t ON t.reference = c.reference
    WHERE c.org_id = ${orgId} ORDER BY c.id DESC LIMIT ${limit}`);
}

export async function anyCreditedTopup(db: CommonQueryMethods, orgId: number): Promise<boolean> {
  return db.exists(sql.type(z.object({ x: z.number() }))`SELECT 1 AS x FROM topups WHERE org_id = ${orgId} AND status = 'credited'`);
}

const skippedRow = z.object({ id: int, org_id: int, units: int, below_units: int, balance_units: int, detail: z.string().nullable() });
export type SkippedCharge = z.infer<typeof skippedRow>;

/**
 * Skipped charges nobody was told of yet (the daily cap, no card to charge, ...), oldest first, for
 * one organisation or all; each is claimed by `markSkipAnnounced` in the transaction that tells.
 */
export async function unannouncedSkips(db: CommonQueryMethods, orgId: number | null, limit: number): Promise<readonly SkippedCharge[]> {
  const org = orgId === null ? sql.fragment`` : sql.fragment`AND org_id = ${orgId}`;
  return db.any(sql.type(skippedRow)`
    SELECT id, org_id, units, below_units, balance_units, detail FROM auto_topup_charges
    WHERE status = 'skipped' AND announced_at IS NULL ${org} ORDER BY id LIMIT ${limit}`);
}

/** False when another run told of it first. */
export async function markSkipAnnounced(tx: CommonQueryMethods, id: number, at: Date): Promise<boolean> {
  const r = await tx.query(sql.unsafe`UPDATE auto_topup_charges SET announced_at = ${sql.timestamp(at)} WHERE id = ${id} AND announced_at IS NULL`);
  return r.rowCount === 1;
}
