// The organisations module's door: other modules and entry points import from here only.
export { loyaltyBadge, type LoyaltyBadge } from './loyalty.ts';
export {
  ADDRESS_NOT_ALLOWED,
  adoptApiClient,
  CLIENT_EXPIRED,
  checkClientCredentials,
  createApiClient,
  effectiveScopes,
  clientPrincipalQuery,
  clientPrincipalRow,
  findClientPrincipal,
  listApiClients,
  retireApiClient,
  rotateApiClient,
  type ApiClientRow,
  type ListedApiClient,
} from './api-clients.ts';
export { seedSandbox, type SeededCredentials } from './sandbox-seed.ts';
export type { CreateOrganisationInput, CreateUserInput, OrganisationRow, Role, Tenancy } from './organisations.schemas.ts';
export {
  addLifetimeUnits,
  createOrganisation,
  createUser,
  deleteOrganisation,
  principalRow,
  userPrincipalQuery,
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
export { findUsernameProblems, listOrganisations, usersByOrganisation } from './directory.ts';
export { normaliseUsername, USERNAME_RULES, usernameProblems, usernameSchema } from './usernames.ts';
export { organisationSettings, organisationSettingsRow, settingsPatch, updateOrganisationSettings, type OrganisationSettings, type SettingsPatch } from './settings.ts';
export { lowBalanceRecipients, LOW_BALANCE_MAX, setLowBalanceUnits } from './low-balance.ts';
