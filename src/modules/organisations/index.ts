// The organisations module's door: other modules and entry points import from here only.
export { loyaltyBadge, type LoyaltyBadge } from './loyalty.ts';
export { checkClientCredentials, createApiClient, findClientPrincipal, listApiClients, retireApiClient, type ApiClientRow } from './api-clients.ts';
export { seedSandbox, type SeededCredentials } from './sandbox-seed.ts';
export type { CreateOrganisationInput, CreateUserInput, OrganisationRow, Role, Tenancy } from './organisations.schemas.ts';
export {
  addLifetimeUnits,
  createOrganisation,
  createUser,
  deleteOrganisation,
  findPrincipal,
  findUserById,
  findUserForLogin,
  getOrganisation,
  listUsers,
  receiptRecipients,
  requireOrganisation,
  setMaxInFlight,
  setPassword,
  setSubscription,
  setUserDisabled,
  type OrgDefaults,
} from './organisations.service.ts';
export { findTeamMember, LAST_ADMIN, listTeamMembers, updateTeamMember, type TeamMember } from './team-members.ts';
export { listOrganisations, usersByOrganisation } from './directory.ts';
