import { z } from 'zod';
import { bearer, errorResponse, errors, json, jsonBody, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { CODE_FAILURE_WINDOW_SECONDS, MAX_CODE_FAILURES } from '../mfa/index.ts';
import { disableMfaBody } from './accounts.schemas.ts';
import { codeBody } from './mfa.routes.ts';

/** An error whose `code` a program can branch on. */
export const codedError = z.object({ detail: z.string(), code: z.string() }).meta({ id: 'CodedError', description: 'An error with a machine-readable code.' });

export function registerMfa(registry: OpenAPIRegistry): void {
  const enrolling =
    'An administrator of an organisation that requires two-factor sign-in may call it before enrolling (every other endpoint but GET /me, ' +
    'POST /change-password and POST /logout answers 403 `mfa_enrolment_required` until then).';
  const Code = codeBody.meta({ id: 'OneTimeCode' });
  const counted =
    ` A wrong code (one-time or recovery) counts towards the user's failures on every endpoint that takes one, sign-in included: past ${MAX_CODE_FAILURES} in ` +
    `${CODE_FAILURE_WINDOW_SECONDS / 60} minutes, 429 with Retry-After (and an \`mfa.codes_locked\` audit event), even for a right code.`;
  const ends = ' Ends every token of the user, this one included, as a password change does: sign in again.';
  registry.registerPath({
    method: 'post',
    path: '/me/mfa/totp',
    operationId: 'enrolTotp',
    tags: [TAGS.auth],
    summary: 'Start two-factor enrolment',
    description:
      'A fresh TOTP secret (RFC 6238: SHA-1, 6 digits, 30 s) for the caller, as base32 and as an `otpauth://` URI for an authenticator app. ' +
      'Not in use until confirmed; enrolling again before confirming replaces it. ' + enrolling,
    security: bearer,
    responses: {
      201: json(z.object({ secret: z.string(), otpauth_uri: z.string() }).meta({ id: 'TotpEnrolment' }), 'Enrolment started'),
      ...errors(401, 429),
      403: errorResponse('An API client, or a first-login token'),
      409: errorResponse('Two-factor sign-in is already on'),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/me/mfa/totp/confirm',
    operationId: 'confirmTotp',
    tags: [TAGS.auth],
    summary: 'Turn two-factor sign-in on',
    description: 'With a current code from the authenticator app. Answers 10 single-use recovery codes, shown only here. ' + enrolling + counted + ends,
    security: bearer,
    request: { body: jsonBody(Code) },
    responses: {
      200: json(z.object({ recovery_codes: z.array(z.string()).length(10) }).meta({ id: 'RecoveryCodes' }), 'Two-factor sign-in is on'),
      ...errors(401, 415, 422, 429),
      400: errorResponse('Invalid one-time code'),
      403: errorResponse('An API client, or a first-login token'),
      409: errorResponse('No enrolment to confirm, or already on'),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/me/mfa/totp',
    operationId: 'disableTotp',
    tags: [TAGS.auth],
    summary: 'Turn two-factor sign-in off',
    description:
      'With the current password and a current code or an unused recovery code. A wrong password counts as a failed sign-in (as `POST /change-password`). ' +
      'An administrator of an organisation that requires two-factor sign-in cannot.' +
      counted +
      ends,
    security: bearer,
    request: { body: jsonBody(disableMfaBody.meta({ id: 'DisableTotp' })) },
    responses: {
      204: { description: 'Two-factor sign-in is off' },
      ...errors(401, 415, 422, 429),
      400: errorResponse('Invalid one-time code, or the current password is incorrect'),
      403: errorResponse('An API client, a required enrolment, or `mfa_required_by_organisation`', codedError),
      409: errorResponse('Two-factor sign-in is not on'),
    },
  });
}
