import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

// The low-balance alert's state lives on the wallet row: `low_balance_alerted` is set by the one
// statement that claims the alert, and cleared by a trigger when a credit brings the balance back
// on or above the organisation's line (or the line changes). The balance is the settled `units`.

/**
 * The alert is due: the wallet (`w`, with `units` and `low_balance_alerted`) is below its
 * organisation's (`o`) line, and no alert was sent since it went there. Every statement that asks
 * uses this one condition.
 */
export const LOW_BALANCE_DUE = sql.fragment`o.low_balance_units IS NOT NULL AND w.units < o.low_balance_units AND NOT w.low_balance_alerted`;

/** Whether a debit left the wallet below its line with no alert sent yet: a read, no lock taken. */
export async function lowBalanceDue(db: CommonQueryMethods, orgId: number): Promise<boolean> {
  const row = await db.maybeOne(sql.type(z.object({ due: z.boolean() }))`
    SELECT true AS due FROM wallets w JOIN organisations o ON o.id = w.org_id
    WHERE w.org_id = ${orgId} AND ${LOW_BALANCE_DUE}`);
  return row !== null;
}

/**
 * Claims the alert: one UPDATE guarded by `NOT low_balance_alerted`. Concurrent debits queue on the
 * wallet row and each re-checks the guard once the one before commits, so exactly one gets a row.
 */
export async function claimLowBalanceAlert(db: CommonQueryMethods, orgId: number): Promise<{ units: number; line: number } | null> {
  return db.maybeOne(sql.type(z.object({ units: z.coerce.number(), line: z.number() }))`
    UPDATE wallets w SET low_balance_alerted = true
    FROM organisations o
    WHERE w.org_id = ${orgId} AND o.id = w.org_id AND ${LOW_BALANCE_DUE}
    RETURNING w.units, o.low_balance_units AS line`);
}
