import type { DatabasePool } from 'slonik';
import { AppError } from '../../lib/errors.ts';
import { getOrganisation, listOrganisations, usersByOrganisation } from '../organisations/index.ts';
import { lastCreditedTopups } from '../topup/index.ts';
import { DEFAULT_LIMIT, type OrganisationPage, type OrganisationView } from './platform.schemas.ts';
import type { OrgRole } from '../../lib/roles.ts';

export const ORGANISATION_NOT_FOUND = 'Organisation not found';
export const BAD_CURSOR = 'cursor is not a next_cursor of this list';

type Org = Awaited<ReturnType<typeof listOrganisations>>[number];

// The cursor is opaque to callers so the order key can change without breaking them.
const encodeCursor = (lastId: number): string => Buffer.from(`org:${lastId}`).toString('base64url');

function decodeCursor(cursor: string): number {
  const m = /^org:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw new AppError('bad_request', BAD_CURSOR);
  return Number(m[1]);
}

/** Three queries per page whatever its size: the organisations, their users, their last top-ups. */
async function viewsOf(db: DatabasePool, orgs: Org[]): Promise<OrganisationView[]> {
  const ids = orgs.map((o) => o.id);
  const [users, topups] = await Promise.all([usersByOrganisation(db, ids), lastCreditedTopups(db, ids)]);
  return orgs.map((o) => ({
    id: o.id,
    name: o.name,
    tenancy: o.tenancy,
    affiliate: o.affiliate,
    subscription_active: o.subscription_active,
    units: o.units,
    reserved_units: o.reserved,
    lifetime_units: o.lifetime_units,
    loyalty_badge: o.loyalty_badge,
    unit_cost: o.unit_cost_kobo,
    min_topup_units: o.min_topup_units,
    max_in_flight: o.max_in_flight,
    created_at: o.created_at,
    deleted_at: o.deleted_at,
    users: (users.get(o.id) ?? []).map((u) => ({ id: u.id, username: u.username, email: u.email, role: u.role as OrgRole, disabled: u.disabled })),
    last_topup: topups.get(o.id) ?? null,
  }));
}

export async function organisationPage(db: DatabasePool, q: { limit?: number; cursor?: string }): Promise<OrganisationPage> {
  const limit = q.limit ?? DEFAULT_LIMIT;
  const afterId = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
  // One row more than asked tells whether a next page exists without a count.
  const rows = await listOrganisations(db, { limit: limit + 1, afterId });
  const page = rows.slice(0, limit);
  return { data: await viewsOf(db, page), next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]!.id) : null };
}

export async function organisationById(db: DatabasePool, rawId: string): Promise<OrganisationView> {
  if (!/^[1-9]\d{0,14}$/.test(rawId)) throw new AppError('not_found', ORGANISATION_NOT_FOUND);
  const org = await getOrganisation(db, Number(rawId));
  if (!org) throw new AppError('not_found', ORGANISATION_NOT_FOUND);
  return (await viewsOf(db, [org]))[0]!;
}
