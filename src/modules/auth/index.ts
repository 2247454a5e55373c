// The auth module's door: other modules and entry points import from here only.
export { allowFirst, createAuthenticator, principalOf } from './auth.middleware.ts';
export { register as registerAuthOpenApi } from './auth.openapi.ts';
export { authRoutes } from './auth.routes.ts';
export type { Principal } from './auth.schemas.ts';
export { BAD_CREDENTIALS, checkCredentials, requireAccountsKeeper, requireOrgAdmin, requireOrgMember, requirePersonOrgAdmin } from './auth.service.ts';
export { redisGate, redisGiveBack } from './gate.ts';
export { auditFailedPasswordConfirmation } from './sign-in-audit.ts';
export { redisRevocations, revokedKey } from './revocations.ts';
export { assertSignInAllowed, clientAddress, guardedSignIn, type SignInDeps } from './sign-in-guard.ts';
