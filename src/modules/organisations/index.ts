// The organisations module's door: other modules and entry points import from here only.
export { loyaltyBadge } from './loyalty.ts';
export {
  ADDRESS_NOT_ALLOWED,
  adoptApiClient,
  CLIENT_EXPIRED,
  checkClientCredentials,
  createApiClient,
  effectiveScopes,
  listApiClients,
  retireApiClient,
  rotateApiClient,
  type ApiClientRow,
  type ListedApiClient,
} from './api-clients.ts';
export {
  findClientPrincipal,
  findUserById,
  findUserForLogin,
  makerMayStillAct,
  parsePrincipalRow,
  principalJson,
  type PrincipalRow,
} from './principals.ts';
export { seedSandbox } from './sandbox-seed.ts';
export {
  addLifetimeUnits,
  createOrganisation,
  createUser,
  deleteOrganisation,
  getOrganisation,
  listUsers,
  receiptRecipients,
  requireOrganisation,
  setMaxInFlight,
  setPassword,
  setSubscription,
  setUserDisabled,
} from './organisations.service.ts';
export { listTeamMembers, updateTeamMember, type TeamMember } from './team-members.ts';
export { findUsernameProblems, listOrganisations, usersByOrganisation } from './directory.ts';
export { usernameSchema } from './usernames.ts';
export { organisationSettings, organisationSettingsRow, settingsPatch, updateOrganisationSettings, type SettingsPatch } from './settings.ts';
export { accountKeepers, financeOfficers, lowBalanceRecipients, type FinanceOfficer } from './low-balance.ts';
