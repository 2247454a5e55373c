// The auth module's door: other modules and entry points import from here only.
export { createAuthenticator, PASSWORD_CHANGE_REQUIRED, principalOf, type Authenticators } from './auth.middleware.ts';
export { register as registerAuthOpenApi } from './auth.openapi.ts';
export { authRoutes } from './auth.routes.ts';
export type { Principal } from './auth.schemas.ts';
export { BAD_CREDENTIALS, checkCredentials, requireOrgAdmin, requireOrgMember, requirePersonOrgAdmin, type TokenSettings } from './auth.service.ts';
export { redisGate, redisGiveBack, type Count } from './gate.ts';
export { redisRevocations, revokedKey, type Revocations } from './revocations.ts';
export {
  assertSignInAllowed,
  clientAddress,
  consumeSignInAttempt,
  guardedSignIn,
  recordFailedSignIn,
  signInSucceeded,
  type SignInDeps,
} from './sign-in-guard.ts';
