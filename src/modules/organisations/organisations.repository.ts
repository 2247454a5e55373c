import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { openWallet } from '../wallet/index.ts';
import { organisationRow, userRow, type Role, type Tenancy } from './organisations.schemas.ts';

export const orgColumns = sql.fragment`
  o.id, o.name, o.tenancy, o.affiliate, o.unit_cost_kobo, o.min_topup_units, o.subscription_active,
  o.lifetime_units, o.business_registration_ref, o.data_protection_ref, o.billing_email, o.created_at,
  o.deleted_at, o.max_in_flight, w.units, w.reserved`;

export async function insertOrganisation(
  db: CommonQueryMethods,
  o: { name: string; tenancy: Tenancy; affiliate: boolean; unitCostKobo: number; minTopupUnits: number; businessRegistration: string; dataProtection: string; billingEmail: string | null },
): Promise<number> {
  const id = await db.oneFirst(sql.type(z.object({ id: z.coerce.number() }))`
    INSERT INTO organisations (name, tenancy, affiliate, unit_cost_kobo, min_topup_units, business_registration_ref, data_protection_ref, billing_email)
    VALUES (${o.name}, ${o.tenancy}, ${o.affiliate}, ${o.unitCostKobo}, ${o.minTopupUnits}, ${o.businessRegistration}, ${o.dataProtection}, ${o.billingEmail})
    RETURNING id`);
  await openWallet(db, id);
  return id;
}

export async function findOrganisation(db: CommonQueryMethods, id: number) {
  return db.maybeOne(sql.type(organisationRow)`
    SELECT ${orgColumns} FROM organisations o JOIN wallets w ON w.org_id = o.id WHERE o.id = ${id}`);
}

export async function setSubscription(db: CommonQueryMethods, id: number, active: boolean): Promise<boolean> {
  const r = await db.query(sql.unsafe`UPDATE organisations SET subscription_active = ${active} WHERE id = ${id} AND deleted_at IS NULL`);
  return r.rowCount === 1;
}

/** null restores the service default. */
export async function setMaxInFlight(db: CommonQueryMethods, id: number, maxInFlight: number | null): Promise<boolean> {
  const r = await db.query(sql.unsafe`UPDATE organisations SET max_in_flight = ${maxInFlight} WHERE id = ${id} AND deleted_at IS NULL`);
  return r.rowCount === 1;
}

export async function markDeleted(db: CommonQueryMethods, id: number): Promise<void> {
  await db.query(sql.unsafe`UPDATE organisations SET deleted_at = now(), subscription_active = false WHERE id = ${id}`);
  // Retiring is an operator's act: an organisation administrator never re-enables these users.
  await db.query(sql.unsafe`UPDATE users SET disabled = true, disabled_by = 'operator' WHERE org_id = ${id}`);
}

export async function insertUser(
  db: CommonQueryMethods,
  u: { orgId: number | null; username: string; email: string | null; passwordHash: string; role: Role; mustChangePassword: boolean },
) {
  return db.one(sql.type(userRow)`
    INSERT INTO users (org_id, username, email, password_hash, role, must_change_password)
    VALUES (${u.orgId}, ${u.username}, ${u.email}, ${u.passwordHash}, ${u.role}, ${u.mustChangePassword})
    RETURNING id, org_id, username, email, role, disabled, must_change_password`);
}

/** The operator's switch (`user:disable`, `user:enable`): recorded as an operator's, so only an operator undoes it. */
export async function setUserDisabled(db: CommonQueryMethods, by: { id?: number; username?: string }, disabled: boolean) {
  const where = by.id !== undefined ? sql.fragment`id = ${by.id}` : sql.fragment`username = ${(by.username ?? '').toLowerCase()}`;
  return db.maybeOne(sql.type(userRow)`
    UPDATE users SET disabled = ${disabled}, disabled_by = ${disabled ? 'operator' : null}
    WHERE ${where} RETURNING id, org_id, username, email, role, disabled, must_change_password`);
}

export async function listUsers(db: CommonQueryMethods, orgId: number) {
  return db.any(sql.type(userRow)`SELECT id, org_id, username, email, role, disabled, must_change_password FROM users WHERE org_id = ${orgId} ORDER BY id`);
}

/** The users_token_version trigger ends every earlier token of the user. */
export async function setPasswordHash(db: CommonQueryMethods, id: number, passwordHash: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE users SET password_hash = ${passwordHash}, must_change_password = false WHERE id = ${id}`);
}

const lifetimeRow = z.object({
  name: z.string(),
  tenancy: z.enum(['hosted', 'self-hosted']),
  lifetime_units: z.coerce.number(),
  retired: z.boolean(),
  address: z.string().nullable(),
  tin: z.string().nullable(),
});

/** Counts purchased units towards loyalty badges; returns what a receipt needs to show the badge and an invoice its buyer. */
export async function addLifetimeUnits(db: CommonQueryMethods, orgId: number, units: number) {
  return db.one(sql.type(lifetimeRow)`
    UPDATE organisations SET lifetime_units = lifetime_units + ${units} WHERE id = ${orgId}
    RETURNING name, tenancy, lifetime_units, (deleted_at IS NOT NULL) AS retired, address, tin`);
}
