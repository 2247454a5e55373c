// The mfa module's door: two-factor sign-in (TOTP and recovery codes) for users.
export { checkSignInCode, confirmTotp, disableTotp, enrolTotp, INVALID_CODE, mfaIsOn, resetMfa, type CodeSender } from './mfa.service.ts';
export { CODE_FAILURE_WINDOW_SECONDS, MAX_CODE_FAILURES } from './code-attempts.ts';
export { resealMfaSecrets, sealedMfaCounts } from './reseal.ts';
