import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { UniqueIntegrityConstraintViolationError } from 'slonik';
import { AppError } from '../../lib/errors.ts';
import { hashPassword } from '../../lib/passwords.ts';
import { loyaltyBadge } from './loyalty.ts';
import * as repo from './organisations.repository.ts';
import { createOrganisationInput, createUserInput, type CreateOrganisationInput, type CreateUserInput, type OrganisationRow } from './organisations.schemas.ts';
import { roles } from '../../lib/roles.ts';

export type { OrganisationRow };
export { addLifetimeUnits } from './organisations.repository.ts';

export type OrgDefaults = { unitCostKobo: number; minTopupUnits: number };

export async function createOrganisation(db: DatabasePool, input: CreateOrganisationInput, defaults: OrgDefaults) {
  const parsed = createOrganisationInput.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AppError('bad_request', `${issue.path.join('.')}: ${issue.message}`);
  }
  const o = parsed.data;
  const id = await db.transaction((tx) =>
    repo.insertOrganisation(tx, {
      name: o.name,
      tenancy: o.tenancy,
      affiliate: o.affiliate,
      unitCostKobo: o.unitCostKobo ?? defaults.unitCostKobo,
      minTopupUnits: o.minTopupUnits ?? defaults.minTopupUnits,
      businessRegistration: o.businessRegistration,
      dataProtection: o.dataProtection,
      billingEmail: o.billingEmail ?? null,
    }),
  );
  return (await getOrganisation(db, id))!;
}

export async function getOrganisation(db: CommonQueryMethods, id: number) {
  const row = await repo.findOrganisation(db, id);
  if (!row) return null;
  return { ...row, loyalty_badge: loyaltyBadge(row.tenancy, row.lifetime_units) };
}

export async function requireOrganisation(db: CommonQueryMethods, id: number) {
  const org = await getOrganisation(db, id);
  if (!org || org.deleted_at) throw new AppError('not_found', `organisation ${id} not found`);
  return org;
}

export async function setSubscription(db: DatabasePool, id: number, active: boolean) {
  await requireOrganisation(db, id);
  await repo.setSubscription(db, id, active);
  return (await getOrganisation(db, id))!;
}

/** Deleting requires an empty wallet (a commercial rule); the organisation is retired, its ledger kept. */
/** The organisation's cap on live lookups in flight; null: back to ORG_MAX_IN_FLIGHT. */
export async function setMaxInFlight(db: DatabasePool, id: number, maxInFlight: number | null) {
  if (maxInFlight !== null && (!Number.isInteger(maxInFlight) || maxInFlight < 1 || maxInFlight > 100_000)) {
    throw new AppError('bad_request', 'max-in-flight must be an integer from 1 to 100000');
  }
  if (!(await repo.setMaxInFlight(db, id, maxInFlight))) throw new AppError('not_found', `organisation ${id} not found`);
  return (await getOrganisation(db, id))!;
}

export async function deleteOrganisation(db: DatabasePool, id: number) {
  return db.transaction(async (tx) => {
    const org = await repo.findOrganisation(tx, id);
    if (!org || org.deleted_at) throw new AppError('not_found', `organisation ${id} not found`);
    if (org.units > 0 || org.reserved > 0) {
      throw new AppError('conflict', `organisation ${id} cannot be deleted: its wallet holds ${org.units} units`);
    }
    await repo.markDeleted(tx, id);
    return { id, deleted: true };
  });
}

export async function createUser(db: CommonQueryMethods, input: CreateUserInput) {
  const parsed = createUserInput.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AppError('bad_request', `${issue.path.join('.') || 'input'}: ${issue.message}`);
  }
  const u = parsed.data;
  if (!roles.inOrganisation(u.role) && u.orgId !== null) throw new AppError('bad_request', `a ${roles.label(u.role)} belongs to no organisation`);
  if (roles.inOrganisation(u.role)) {
    if (u.orgId === null) throw new AppError('bad_request', 'org is required');
    await requireOrganisation(db, u.orgId);
  }
  try {
    return await repo.insertUser(db, {
      orgId: u.orgId,
      username: u.username,
      email: u.email ?? (u.username.includes('@') ? u.username : null),
      passwordHash: await hashPassword(u.password),
      role: u.role,
      // Platform administrators are operators, never asked; organisation users are unless told otherwise.
      mustChangePassword: roles.inOrganisation(u.role) && (u.requirePasswordChange ?? true),
    });
  } catch (err) {
    if (err instanceof UniqueIntegrityConstraintViolationError) throw new AppError('conflict', `username ${u.username} is taken`);
    throw err;
  }
}

/** Stores a new password (argon2id) and clears the first-login flag; every earlier token ends. */
export async function setPassword(db: CommonQueryMethods, userId: number, password: string): Promise<void> {
  await repo.setPasswordHash(db, userId, await hashPassword(password));
}

export async function setUserDisabled(db: DatabasePool, by: { id?: number; username?: string }, disabled: boolean) {
  const user = await repo.setUserDisabled(db, by, disabled);
  if (!user) throw new AppError('not_found', 'user not found');
  return user;
}

export async function listUsers(db: DatabasePool, orgId: number) {
  return repo.listUsers(db, orgId);
}

/**
 * Where a receipt goes: the billing address, else the administrators' e-mail addresses; and the
 * person who paid (`payerId`, the user who started the top-up), who is still active in the
 * organisation and has an address, beside them. Each address once, compared without case.
 */
export async function receiptRecipients(db: DatabasePool, orgId: number, fallback: string, payerId: number | null = null): Promise<string[]> {
  const [org, users] = await Promise.all([repo.findOrganisation(db, orgId), repo.listUsers(db, orgId)]);
  const active = users.filter((u) => !u.disabled && u.email);
  const admins = active.filter((u) => roles.may(u.role, 'administer_organisation')).map((u) => u.email!);
  const billing = org?.billing_email ? [org.billing_email] : admins.length > 0 ? admins : [fallback];
  const payer = active.find((u) => u.id === payerId)?.email;
  const seen = new Set<string>();
  return [...billing, ...(payer ? [payer] : [])].filter((a) => !seen.has(a.toLowerCase()) && seen.add(a.toLowerCase()));
}
