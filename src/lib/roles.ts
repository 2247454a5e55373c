import { z } from 'zod';
import { SCOPES, type Scope } from './api-scopes.ts';

/**
 * The roles, defined once. Every question the code asks about a role ("may it manage the team?",
 * "which scopes does it allow?", "does it belong to an organisation?") is answered from this table, and
 * SQL that compares roles takes its list from here (rolesWith) rather than naming a role. A new role is
 * one entry here plus a migration widening the role CHECKs of `users` (and `api_clients` if an API
 * client may hold it); test/team/role-table.test.ts adds one in a fixture and shows it refused
 * everywhere its capabilities do not reach.
 */
export const CAPABILITIES = [
  // The organisation's team, API clients, settings, top-ups and ledger, audit events; also what the
  // organisation's two-factor requirement binds, whom low-balance mail goes to, and what an API client's
  // creator must still hold for the client to keep working.
  'administer_organisation',
  // The organisation's money: top-ups (buying units), their invoices, monthly statements, the ledger,
  // daily usage and the audit trail. Administrators hold it, and the finance role holds only it.
  'keep_accounts',
  // The platform's organisations, users and queues.
  'operate_platform',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

/** The 403 `detail` a principal without the capability gets (and a person's token refused a scope only its holders have). */
export const CAPABILITY_REFUSALS: Record<Capability, string> = {
  administer_organisation: 'Only organisation administrators may do this',
  keep_accounts: 'Only organisation administrators and finance officers may do this',
  operate_platform: 'Only platform administrators may do this',
};

export type RoleDefinition = {
  /** How the role reads in the portal and pages. */
  label: string;
  /** Whether a holder belongs to an organisation (users.org_id set exactly then; an API client may hold it). */
  inOrganisation: boolean;
  /** The token scopes the role allows (a token may be narrowed to fewer, never widened). */
  scopes: readonly Scope[];
  capabilities: readonly Capability[];
};

/** The one edit for a new role. */
export const ROLE_TABLE = {
  org_admin: { label: 'admin', inOrganisation: true, scopes: SCOPES, capabilities: ['administer_organisation', 'keep_accounts'] },
  // Topping up spends the organisation's money (administrators and the finance role only), webhook
  // endpoints send its events to a server of one's choosing, and a verification link lets anyone who
  // holds it spend the organisation's units on verifications (administrators only).
  member: { label: 'member', inOrganisation: true, scopes: SCOPES.filter((s) => s !== 'topup' && s !== 'webhooks' && s !== 'links'), capabilities: [] },
  // Pays and reads the money (top-ups, invoices, statements, ledger, history, audit trail); never
  // verifies, runs batches or manages the team, API clients, webhooks or verification links.
  finance: { label: 'finance officer', inOrganisation: true, scopes: ['topup', 'history:read'], capabilities: ['keep_accounts'] },
  // Belongs to no organisation, so no scope: the platform's own pages and routes only.
  platform_admin: { label: 'platform administrator', inOrganisation: false, scopes: [], capabilities: ['operate_platform'] },
} as const satisfies Record<string, RoleDefinition>;

/** Everything derived from a role table; built once for the service, and again by tests with a fixture role. */
export function roleBook<R extends string>(table: Record<R, RoleDefinition>) {
  const names = Object.keys(table) as R[];
  const holders = (test: (d: RoleDefinition) => boolean): R[] => names.filter((r) => test(table[r]));
  const orgRoles = holders((d) => d.inOrganisation);
  const known = (role: string): role is R => Object.hasOwn(table, role);
  return {
    names,
    /** The roles a member of an organisation (a user or an API client) may hold. */
    orgRoles,
    schema: z.enum(names as [R, ...R[]]),
    orgRoleSchema: z.enum(orgRoles as [R, ...R[]], { message: `role must be ${[...orgRoles].sort().map((r) => `"${r}"`).join(' or ')}` }),
    known,
    may: (role: string, capability: Capability): boolean => known(role) && table[role].capabilities.includes(capability),
    inOrganisation: (role: string): boolean => known(role) && table[role].inOrganisation,
    /** Everything a role allows; an unknown role, nothing. */
    scopes: (role: string): Scope[] => (known(role) ? [...table[role].scopes] : []),
    label: (role: string): string => (known(role) ? table[role].label : role),
    /** The roles holding a capability: the list SQL compares against (`role = ANY(...)`). */
    rolesWith: (capability: Capability): R[] => holders((d) => d.capabilities.includes(capability)),
    /**
     * The capability every role allowing `scope` holds, if any (the topup scope: keep_accounts): a
     * person's token refused that scope is answered with the capability's refusal, as the route's own
     * guard would answer it.
     */
    capabilityBehind: (scope: Scope): Capability | null => {
      const allowing = holders((d) => d.scopes.includes(scope));
      return CAPABILITIES.find((c) => allowing.length > 0 && allowing.every((r) => table[r].capabilities.includes(c))) ?? null;
    },
  };
}

export const roles = roleBook(ROLE_TABLE);
export type Role = keyof typeof ROLE_TABLE;
/** The roles with an organisation: what a team member or an API client may hold. */
export type OrgRole = { [R in Role]: (typeof ROLE_TABLE)[R]['inOrganisation'] extends true ? R : never }[Role];
export const roleSchema = roles.schema;
export const orgRoleSchema = roles.orgRoleSchema as z.ZodEnum<{ [R in OrgRole]: R }>;
/** The role a new organisation's first user (sandbox, CLI) gets: the first that administers it. */
export const ORG_ADMINISTRATOR: OrgRole = roles.rolesWith('administer_organisation')[0] as OrgRole;
/** A role of an organisation that administers nothing (the sandbox's second user). */
export const ORG_MEMBER: OrgRole = roles.orgRoles.find((r) => roles.may(r, 'administer_organisation') === false) as OrgRole;
/** users.disabled_by when an organisation's administrator (not the operator) disabled the account. */
export const DISABLED_BY_ORG_ADMINISTRATOR = 'org_admin' as const;
