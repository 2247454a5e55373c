import { CODE_FAILURE_WINDOW_SECONDS, MAX_CODE_FAILURES } from '../mfa/index.ts';
import { bearer, errorResponse, errors, formBody, json, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { z } from 'zod';
import { loginFormDoc, meResponse, tokenResponse } from './auth.schemas.ts';
import { OAUTH_ERRORS } from './token-errors.ts';

const tokenError = z
  .object({
    detail: z.string().meta({ example: 'Incorrect username or password' }),
    error: z.enum(OAUTH_ERRORS).meta({ description: 'RFC 6749 section 5.2 error code' }),
    error_description: z.string().meta({ description: 'The same text as `detail`' }),
  })
  .meta({ id: 'TokenError', description: 'An OAuth 2.0 error response (RFC 6749 section 5.2) that also carries the usual `detail`.' });

export function register(registry: OpenAPIRegistry): void {
  const LoginForm = loginFormDoc.meta({ id: 'LoginForm', description: 'OAuth 2.0 password or client credentials grant, form-encoded.' });
  const TokenResponse = tokenResponse.meta({ id: 'TokenResponse', description: 'OAuth 2.0 token response; `expires_in` is in seconds (3600).' });
  const Me = meResponse.meta({ id: 'Me',
    description: 'The caller and their organisation. Wallet and pricing fields appear only for organisation administrators.',
  });

  registry.registerPath({
    method: 'post',
    path: '/login',
    operationId: 'login',
    tags: [TAGS.auth],
    summary: 'Obtain an access token',
    description:
      'Exchanges a username and password (`grant_type=password`, the default) for a bearer token valid 60 minutes. Each attempt takes a failure ' +
      'point before the password is checked and gives it back on success: after `LOGIN_MAX_FAILURES` failures for a username from one client ' +
      'address, or `LOGIN_MAX_FAILURES_PER_ADDRESS` from one address for any username, attempts from that address are refused with 429 for ' +
      '`LOGIN_LOCK_SECONDS`; other addresses are not affected. A first login answers `require_password_change: true`. With ' +
      '`grant_type=client_credentials`, an API client sends `client_id` and `client_secret` in the form or as HTTP Basic credentials (RFC 6749 section 2.3.1). ' +
      'With two-factor sign-in on, the form also carries `otp` (a code of the authenticator app, good once, or an unused recovery code); a right password without a good code counts as a failure. ' +
      `A wrong code also counts towards the user's code failures, from any address (429 with Retry-After past ${MAX_CODE_FAILURES} in ${CODE_FAILURE_WINDOW_SECONDS / 60} minutes); a spent recovery code ends the user's other tokens. ` +
      'Client credentials sent with the password grant are checked too. `scope` (space-delimited, RFC 6749 section 3.3) narrows the token to the scopes named, ' +
      "each of which the user's role or the API client must allow (else 400 `invalid_scope`); left out, the token has all of them. The answer's `scope` lists what was granted. " +
      'A narrowed token is refused (403 `insufficient_scope`) on an endpoint that needs a scope it lacks, and a person\'s narrowed token also on the endpoints only a person may call. Errors follow RFC 6749 section 5.2 (`error`, `error_description`) and keep `detail`.',
    security: [],
    request: { body: formBody(LoginForm) },
    responses: {
      200: json(TokenResponse, 'Token issued'),
      ...errors(429),
      400: errorResponse(
        '`invalid_request` (a parameter missing, empty or sent more than once; client credentials both in HTTP Basic and in the form), ' +
          '`unsupported_grant_type`, `invalid_scope` (a scope unknown, empty, or beyond the user\'s role or the API client\'s scopes), or `unauthorized_client` (an API client signing in a person of another organisation)',
        tokenError,
      ),
      401: {
        ...errorResponse('`invalid_grant`: Incorrect username or password, or with two-factor sign-in on `mfa_required` (no `otp`) or `mfa_invalid` (a wrong or used code); `invalid_client`: Incorrect client credentials, or an API client that has expired or is used from an address outside its `allowed_ips`', tokenError),
        headers: { 'WWW-Authenticate': { description: '`Basic realm="idverify"` on invalid_client, `Bearer` on invalid_grant', schema: { type: 'string' } } },
      },
      413: errorResponse('`invalid_request`: body too large or too many parameters', tokenError),
      415: errorResponse('`invalid_request`: the body is not application/x-www-form-urlencoded', tokenError),
    },
  });

  for (const [path, operationId] of [
    ['/me', 'getMe'],
    ['/meorganisation', 'getMeOrganisation'],
  ] as const) {
    registry.registerPath({
      method: 'get',
      path,
      operationId,
      tags: [TAGS.auth],
      summary: path === '/me' ? 'The caller and their organisation' : 'Alias of GET /me',
      security: bearer,
      responses: { 200: json(Me), ...errors(401, 429) },
    });
  }
}
