import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { openWallet } from '../wallet/index.ts';
import { organisationRow, userRow, type Role, type Tenancy } from './organisations.schemas.ts';
import { roles, roleSchema } from '../../lib/roles.ts';

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

export const authUserRow = z.object({
  id: z.coerce.number(),
  org_id: z.coerce.number().nullable(),
  username: z.string(),
  role: roleSchema,
  disabled: z.boolean(),
  email: z.string().nullable(),
  password_hash: z.string(),
  org_deleted: z.boolean(),
  token_version: z.coerce.number(),
  must_change_password: z.boolean(),
});

/**
 * New usernames are stored NFKC-normalised, so the name as typed is normalised the same way (a
 * full-width `ａｄｍｉｎ` finds `admin`); the lower-cased name as typed still finds a row stored before
 * normalisation, and wins when both exist.
 */
export async function findUserForLogin(db: CommonQueryMethods, username: string) {
  const typed = username.toLowerCase();
  const normalised = username.normalize('NFKC').toLowerCase().normalize('NFKC');
  return db.maybeOne(sql.type(authUserRow)`
    SELECT u.id, u.org_id, u.username, u.role, u.disabled, u.email, u.password_hash, (o.deleted_at IS NOT NULL) AS org_deleted,
           u.token_version, u.must_change_password
    FROM users u LEFT JOIN organisations o ON o.id = u.org_id
    WHERE u.username IN (${typed}, ${normalised})
    ORDER BY u.username = ${typed} DESC LIMIT 1`);
}

export async function findUserById(db: CommonQueryMethods, id: number) {
  return db.maybeOne(sql.type(authUserRow)`
    SELECT u.id, u.org_id, u.username, u.role, u.disabled, u.email, u.password_hash, (o.deleted_at IS NOT NULL) AS org_deleted,
           u.token_version, u.must_change_password
    FROM users u LEFT JOIN organisations o ON o.id = u.org_id
    WHERE u.id = ${id}`);
}

/** The users_token_version trigger ends every earlier token of the user. */
export async function setPasswordHash(db: CommonQueryMethods, id: number, passwordHash: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE users SET password_hash = ${passwordHash}, must_change_password = false WHERE id = ${id}`);
}

export const principalRow = z.object({
  id: z.coerce.number(),
  org_id: z.coerce.number().nullable(),
  username: z.string(),
  role: roleSchema,
  active: z.boolean(),
  subscription_active: z.boolean().nullable(),
  max_in_flight: z.coerce.number().nullable(),
  token_version: z.coerce.number(),
  must_change_password: z.boolean(),
  mfa_enrolment_required: z.boolean(),
});

/**
 * The user as every authenticated request sees it: read on every request, so a disabled user's
 * tokens stop working at once. A fragment so a hot route can read it in its own statement.
 */
/** `userId`: a value, or a column of the caller's statement (a batched read's `i.user_id`). */
export function userPrincipalQuery(userId: number | FragmentSqlToken) {
  return sql.fragment`
    SELECT u.id, u.org_id, u.username, u.role,
           (NOT u.disabled AND (u.org_id IS NULL OR o.deleted_at IS NULL)) AS active,
           o.subscription_active, o.max_in_flight, u.token_version, u.must_change_password,
           -- Read here, in the one query of every request, rather than by a second round trip: the
           -- enrolment itself is the mfa module's table, this only asks whether it exists.
           (u.role = ANY(${sql.array(roles.rolesWith('administer_organisation'), 'text')}) AND coalesce(o.require_mfa, false)
             AND NOT EXISTS (SELECT 1 FROM user_mfa m WHERE m.user_id = u.id AND m.enabled_at IS NOT NULL)) AS mfa_enrolment_required
    FROM users u LEFT JOIN organisations o ON o.id = u.org_id
    WHERE u.id = ${userId}`;
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
