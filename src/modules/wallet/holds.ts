import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { LOW_BALANCE_DUE } from './low-balance.ts';

// A unit is held while its verification is pending, then captured (one debit and its ledger line)
// or released. Each of the three changes the wallet row and the verification row together in ONE
// autocommit statement: the row lock lasts the statement and its commit flush, never a client round
// trip. So the caller hands in its own part of the statement as a fragment, and the wallet part
// stays here.

/**
 * Holds one unit and, in the same statement, runs `record`: an INSERT ... SELECT ... FROM hold (the
 * CTE yields the organisation's org_id once, or nothing when no unit is spendable, so nothing is
 * written then). True when the unit was held.
 */
export async function holdUnit(db: CommonQueryMethods, orgId: number, record: FragmentSqlToken): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    WITH hold AS (
      UPDATE wallets SET reserved = reserved + 1
      WHERE org_id = ${orgId} AND units - reserved >= 1
      RETURNING org_id
    )
    ${record}`);
  return r.rowCount === 1;
}

/**
 * The units the organisation could still hold once `promised` is counted as held: a scalar subquery,
 * the caller's count of units its lookups were let in to hold and have not held yet. One statement,
 * so the wallet and the caller's rows are read in one snapshot: a hold committing meanwhile (its
 * row and its unit are one statement) is counted once, as held or as promised. No lock is taken.
 */
export async function spendableUnits(db: CommonQueryMethods, orgId: number, promised: FragmentSqlToken): Promise<number> {
  const n = await db.maybeOneFirst(sql.type(z.object({ n: z.coerce.number() }))`
    SELECT units - reserved - (${promised}) AS n FROM wallets WHERE org_id = ${orgId}`);
  return n ?? 0;
}

/**
 * What a debit may have to be followed by, as its own statement saw the wallet it left: a low-balance
 * alert still to send, or an automatic top-up charge its trigger may have queued. Both false is the
 * usual case, and then nothing needs to be read after the debit.
 */
export type DebitFollowUp = { lowBalanceDue: boolean; autoTopupDue: boolean };

/** For debits whose statement did not say (a face match's extra units): look for both. */
export const FOLLOW_UP_BOTH: DebitFollowUp = { lowBalanceDue: true, autoTopupDue: true };

const followUpRow = z.object({ low_balance_due: z.boolean(), auto_topup_due: z.boolean() });

/**
 * Runs `decide` (an UPDATE ... RETURNING org_id, details, or no row when there is nothing to decide)
 * and turns the unit it held into exactly one verification debit with its ledger line, in one
 * statement. The debit's follow-up when a debit was recorded (the wallet as the debit left it, read
 * under its row lock: the conditions are the alert's own (low-balance.ts) and the trigger's
 * `auto_topup_due`), else null.
 */
export async function captureHeldUnit(db: CommonQueryMethods, c: { decide: FragmentSqlToken; reference: string }): Promise<DebitFollowUp | null> {
  const row = await db.maybeOne(sql.type(followUpRow)`
    WITH v AS (
      ${c.decide}
    ), w AS (
      UPDATE wallets SET units = units - 1, reserved = reserved - 1
      WHERE org_id = (SELECT org_id FROM v)
      RETURNING org_id, units, low_balance_alerted
    ), ledger AS (
      INSERT INTO wallet_transactions (org_id, kind, amount, units_delta, units_before, units_after, details, reference)
      SELECT w.org_id, 'verification', o.unit_cost_kobo, -1, w.units + 1, w.units, v.details, ${c.reference}
      FROM w CROSS JOIN v JOIN organisations o ON o.id = w.org_id
      RETURNING org_id
    )
    SELECT ${LOW_BALANCE_DUE} AS low_balance_due, auto_topup_due(w.org_id, w.units) AS auto_topup_due
    FROM w JOIN organisations o ON o.id = w.org_id
    WHERE EXISTS (SELECT 1 FROM ledger)`);
  return row ? { lowBalanceDue: row.low_balance_due, autoTopupDue: row.auto_topup_due } : null;
}

/** Runs `decide` (an UPDATE ... RETURNING org_id) and gives back the unit it held, in one statement. */
export async function releaseHeldUnit(db: CommonQueryMethods, decide: FragmentSqlToken): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    WITH v AS (
      ${decide}
    )
    UPDATE wallets SET reserved = reserved - 1 WHERE org_id = (SELECT org_id FROM v)`);
  return r.rowCount === 1;
}

/**
 * The units a compared face match costs beyond its lookup's captured unit, debited with their ledger
 * line (kind `face_match`) in one statement that also runs the caller's `decide`. `eligible` (a SELECT)
 * must find the verification still undecided for this step; `decide` (an UPDATE ... RETURNING details)
 * may read the CTE `paid` and must change a row only when `paid` has one. So the units go only with
 * the decision, and the decision only with the units: both or neither. The unique index on
 * (reference) for kind `face_match` refuses a second debit for one verification (that statement fails
 * as a whole). False when the wallet could not pay (nothing written).
 */
export async function debitFaceMatch(db: CommonQueryMethods, c: { orgId: number; units: number; reference: string; eligible: FragmentSqlToken; decide: FragmentSqlToken }): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    WITH paid AS (
      UPDATE wallets SET units = units - ${c.units}
      WHERE org_id = ${c.orgId} AND units - reserved >= ${c.units} AND EXISTS (${c.eligible})
      RETURNING org_id, units
    ), v AS (
      ${c.decide}
    )
    INSERT INTO wallet_transactions (org_id, kind, amount, units_delta, units_before, units_after, details, reference)
    SELECT paid.org_id, 'face_match', o.unit_cost_kobo * ${c.units}, ${-c.units}, paid.units + ${c.units}, paid.units, v.details, ${c.reference}
    FROM paid CROSS JOIN v JOIN organisations o ON o.id = paid.org_id`);
  return r.rowCount === 1;
}
