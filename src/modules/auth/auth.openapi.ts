import { bearer, errorResponse, errors, formBody, json, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { loginFormDoc, meResponse, tokenResponse } from './auth.schemas.ts';

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
      '`grant_type=client_credentials`, an API client sends `client_id` and `client_secret` in the form or as HTTP Basic credentials (RFC 6749 section 2.3.1).',
    security: [],
    request: { body: formBody(LoginForm) },
    responses: {
      200: json(TokenResponse, 'Token issued'),
      ...errors(400, 415, 422, 429),
      401: errorResponse('Incorrect username or password, or Incorrect client credentials'),
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
