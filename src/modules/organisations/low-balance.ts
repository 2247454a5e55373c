import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import { roles } from '../../lib/roles.ts';

export const LOW_BALANCE_MAX = 1_000_000_000;

/**
 * The organisation's low-balance line in units (null: no alerts). Changing it arms the alert again
 * (a trigger on organisations), so the first debit below a new line is announced. The caller records
 * `organisation.settings_changed` (the PATCH with its other settings, or the operator's command).
 */
export async function setLowBalanceUnits(db: CommonQueryMethods, orgId: number, units: number | null): Promise<{ org_id: number; low_balance_units: number | null }> {
  if (units !== null && (!Number.isInteger(units) || units < 1 || units > LOW_BALANCE_MAX)) {
    throw new AppError('bad_request', `low_balance_units must be an integer from 1 to ${LOW_BALANCE_MAX}, or null to turn alerts off`);
  }
  const row = await db.maybeOne(sql.type(z.object({ org_id: z.coerce.number(), low_balance_units: z.number().nullable() }))`
    UPDATE organisations SET low_balance_units = ${units}
    WHERE id = ${orgId} AND deleted_at IS NULL
    RETURNING id AS org_id, low_balance_units`);
  if (!row) throw new AppError('not_found', `organisation ${orgId} not found`);
  return row;
}

/** Who hears of a low balance: the organisation's active administrators with an address, else its billing address. */
export async function lowBalanceRecipients(db: CommonQueryMethods, orgId: number): Promise<{ organisation: string; recipients: string[] }> {
  const row = await db.one(sql.type(z.object({ name: z.string(), billing_email: z.string().nullable(), admins: z.array(z.string()) }))`
    SELECT o.name, o.billing_email,
           coalesce(array_agg(u.email ORDER BY u.id) FILTER (WHERE u.email IS NOT NULL), '{}') AS admins
    FROM organisations o
    LEFT JOIN users u ON u.org_id = o.id AND u.role = ANY(${sql.array(roles.rolesWith('administer_organisation'), 'text')}) AND NOT u.disabled
    WHERE o.id = ${orgId}
    GROUP BY o.id`);
  return { organisation: row.name, recipients: row.admins.length > 0 ? row.admins : row.billing_email ? [row.billing_email] : [] };
}
