// The mfa module's door: two-factor sign-in (TOTP and recovery codes) for users.
export { checkSignInCode, confirmTotp, disableTotp, enrolTotp, INVALID_CODE, resetMfa, type MfaDeps } from './mfa.service.ts';
export { resealMfaSecrets, sealedMfaCounts } from './reseal.ts';
