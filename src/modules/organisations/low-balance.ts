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

/**
 * Who hears of a low balance: the addresses the organisation chose (alert_emails), else its active
 * administrators with an address, else its billing address.
 */
export async function lowBalanceRecipients(db: CommonQueryMethods, orgId: number): Promise<{ organisation: string; recipients: string[] }> {
  const row = await db.one(sql.type(z.object({ name: z.string(), billing_email: z.string().nullable(), alert_emails: z.array(z.string()), admins: z.array(z.string()) }))`
    SELECT o.name, o.billing_email, o.alert_emails,
           coalesce(array_agg(u.email ORDER BY u.id) FILTER (WHERE u.email IS NOT NULL), '{}') AS admins
    FROM organisations o
    LEFT JOIN users u ON u.org_id = o.id AND u.role = ANY(${sql.array(roles.rolesWith('administer_organisation'), 'text')}) AND NOT u.disabled
    WHERE o.id = ${orgId}
    GROUP BY o.id`);
  if (row.alert_emails.length > 0) return { organisation: row.name, recipients: row.alert_emails };
  return { organisation: row.name, recipients: row.admins.length > 0 ? row.admins : row.billing_email ? [row.billing_email] : [] };
}

export const financeOfficerRow = z.object({ user_id: z.coerce.number(), org_id: z.coerce.number(), email: z.string(), organisation: z.string() });
export type FinanceOfficer = z.infer<typeof financeOfficerRow>;

/**
 * The finance officers (roles that keep the accounts without administering: the finance role) who
 * should hear of a month's statement: active, with an address, in a live organisation, both there
 * before the month ended. Paged by user id (`afterUserId`), so a run reads a bounded slice at a time.
 */
export async function financeOfficers(db: CommonQueryMethods, o: { before: Date; afterUserId: number; limit: number }): Promise<readonly FinanceOfficer[]> {
  const officers = roles.rolesWith('keep_accounts').filter((r) => !roles.may(r, 'administer_organisation'));
  return db.any(sql.type(financeOfficerRow)`
    SELECT u.id AS user_id, u.org_id, u.email, o.name AS organisation
    FROM users u JOIN organisations o ON o.id = u.org_id
    WHERE u.role = ANY(${sql.array(officers, 'text')}) AND NOT u.disabled AND u.email IS NOT NULL
      AND o.deleted_at IS NULL AND u.created_at < ${sql.timestamp(o.before)} AND o.created_at < ${sql.timestamp(o.before)}
      AND u.id > ${o.afterUserId}
    ORDER BY u.id
    LIMIT ${o.limit}`);
}

/**
 * Who hears that the organisation turned someone away or that its automatic top-up was skipped: its
 * active administrators and finance officers with an address (each once), else its billing address.
 */
export async function accountKeepers(db: CommonQueryMethods, orgId: number): Promise<{ organisation: string; recipients: string[] }> {
  const row = await db.one(sql.type(z.object({ name: z.string(), billing_email: z.string().nullable(), staff: z.array(z.string()) }))`
    SELECT o.name, o.billing_email,
           coalesce(array_agg(DISTINCT lower(u.email)) FILTER (WHERE u.email IS NOT NULL), '{}') AS staff
    FROM organisations o
    LEFT JOIN users u ON u.org_id = o.id AND u.role = ANY(${sql.array(roles.rolesWith('keep_accounts'), 'text')}) AND NOT u.disabled
    WHERE o.id = ${orgId}
    GROUP BY o.id`);
  return { organisation: row.name, recipients: row.staff.length > 0 ? row.staff : row.billing_email ? [row.billing_email] : [] };
}
