import { bearer, errorResponse, errors, formBody, json, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { loginForm, meResponse, tokenResponse } from './auth.schemas.ts';

export function register(registry: OpenAPIRegistry): void {
  const LoginForm = loginForm.meta({ id: 'LoginForm', description: 'OAuth 2.0 password flow, form-encoded.' });
  const TokenResponse = tokenResponse.meta({ id: 'TokenResponse', description: 'SPEC 2.7; `expires_in` is in seconds (3600).' });
  const Me = meResponse.meta({ id: 'Me',
    description: 'The caller and their organisation. Wallet and pricing fields appear only for organisation administrators.',
  });

  registry.registerPath({
    method: 'post',
    path: '/login',
    operationId: 'login',
    tags: [TAGS.auth],
    summary: 'Obtain an access token',
    description: 'Exchanges a username and password for a bearer token valid 60 minutes. Repeated failures lock the username and the address for a while (429).',
    security: [],
    request: { body: formBody(LoginForm) },
    responses: {
      200: json(TokenResponse, 'Token issued'),
      ...errors(400, 415, 422, 429),
      401: errorResponse('Incorrect username or password'),
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
