import { z } from 'zod';
import { bearer, errorResponse, errors, json, jsonBody, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { CODE_FAILURE_WINDOW_SECONDS, MAX_CODE_FAILURES } from '../mfa/index.ts';
import { disableMfaBody } from './accounts.schemas.ts';
import { codeBody } from './mfa.routes.ts';

/** An error whose `code` a program can branch on. */
export const codedError = z.object({ detail: z.string(), code: z.string() }).meta({ id: 'CodedError', description: 'An error with a machine-readable code.' });

export function registerMfa(registry: OpenAPIRegistry): void {
  const enrolling =
    'An administrator of an organisation that requires two-factor sign-in may call it before enrolling (every other endpoint but the two ' +
    'enrolment endpoints, GET /me, GET /meorganisation, POST /change-password and POST /logout answers 403 `mfa_enrolment_required` until then).';
  const who = 'A user\'s bearer token (API clients get 403).';
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
      `${who} No body; answers 201 \`{"secret": "<base32>", "otpauth_uri": "otpauth://totp/..."}\`: a fresh TOTP secret (RFC 6238: SHA-1, 6 digits, 30 s, ` +
      'as authenticator apps expect; show the URI as a QR code). Not in use until confirmed; calling it again before confirming replaces ' +
      'the secret. With two-factor sign-in already on: 409. The secret is stored sealed with `ENCRYPTION_KEYS` (AES-256-GCM, bound to the user). ' +
      enrolling,
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
    description:
      `${who} \`{"code": "123456"}\`, a current code from the authenticator app, turns it on and answers 200 \`{"recovery_codes": [10 strings]}\`, ` +
      'shown only here (stored as SHA-256 digests; each is good for one sign-in, typed with or without its dashes, in any case). A wrong ' +
      'code: 400 `Invalid one-time code`; nothing to confirm: 409. The confirming code cannot also sign in. Confirming again (after turning ' +
      'it off) issues a new secret and new recovery codes; the old ones die. ' +
      enrolling +
      counted +
      ends,
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
      `${who} \`{"code": "...", "current_password": "..."}\` (a current code or an unused recovery code, and the current password) turns it ` +
      'off: 204. No password: 422; a wrong one: 400 `Current password is incorrect`, counted as a failed sign-in (as `POST /change-password`; ' +
      'checked before the code, so it costs no code). A wrong code: 400; not on: 409. An administrator of an organisation that requires ' +
      'two-factor sign-in cannot: 403 with `"code": "mfa_required_by_organisation"`.' +
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
