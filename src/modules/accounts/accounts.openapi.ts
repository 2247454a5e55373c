import { z } from 'zod';
import { bearer, errorResponse, errors, json, jsonBody, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { registerMfa } from './mfa.openapi.ts';
import { apiClientList, changePasswordBody, createApiClientBody, createdApiClient, detailResponse, forgotPasswordBody, listedApiClient, resetPasswordBody } from './accounts.schemas.ts';

export function register(registry: OpenAPIRegistry): void {
  registerMfa(registry);
  const Detail = detailResponse.meta({ id: 'Detail' });
  const firstLogin = 'A first-login token (`require_password_change`) may call it.';

  registry.registerPath({
    method: 'post',
    path: '/change-password',
    operationId: 'changePassword',
    tags: [TAGS.auth],
    summary: "Change the caller's password",
    description:
      'Needs the current password. Every token of the user issued before the change stops working, this one included: log in again. ' +
      'A wrong current password counts as a failed sign-in. ' + firstLogin,
    security: bearer,
    request: { body: jsonBody(changePasswordBody.meta({ id: 'ChangePasswordRequest' })) },
    responses: {
      200: json(Detail, 'Password changed'),
      ...errors(401, 415, 422, 429),
      400: errorResponse('Current password is incorrect, or the new one breaks a rule (at least 8 characters, not the username, not the current password)'),
      403: errorResponse('An API client has no password'),
    },
  });

  registry.registerPath({
    method: 'post',
    path: '/logout',
    operationId: 'logout',
    tags: [TAGS.auth],
    summary: 'End the presented token',
    description: 'The token stops working at once; other tokens of the same user do not. ' + firstLogin,
    security: bearer,
    responses: { 204: { description: 'Logged out' }, ...errors(401, 429) },
  });

  registry.registerPath({
    method: 'post',
    path: '/forgot-password',
    operationId: 'forgotPassword',
    tags: [TAGS.auth],
    summary: 'Ask for a password-reset e-mail',
    description:
      'Always answers 202, whether or not the username exists. An enabled user with an e-mail address receives a single-use token valid 30 minutes ' +
      '(and a link, when the operator has configured one).',
    security: [],
    request: { body: jsonBody(forgotPasswordBody.meta({ id: 'ForgotPasswordRequest' })) },
    responses: { 202: json(Detail, 'Accepted'), ...errors(400, 415, 422) },
  });

  registry.registerPath({
    method: 'post',
    path: '/reset-password',
    operationId: 'resetPassword',
    tags: [TAGS.auth],
    summary: 'Set a new password with a reset token',
    description: 'Uses the token from the reset e-mail (once). Every earlier token of the user stops working.',
    security: [],
    request: { body: jsonBody(resetPasswordBody.meta({ id: 'ResetPasswordRequest' })) },
    responses: {
      200: json(Detail, 'Password changed'),
      ...errors(415, 422),
      400: errorResponse('Invalid or expired reset token, or the new password breaks a rule'),
    },
  });

  const ApiClient = createdApiClient.meta({ id: 'CreatedApiClient', description: 'The secret is shown here only.' });
  const forbidden = errorResponse('Not an organisation administrator, or an API client');
  registry.registerPath({
    method: 'post',
    path: '/api-clients',
    operationId: 'createApiClient',
    tags: [TAGS.auth],
    summary: 'Create API credentials for a server',
    description:
      'Organisation administrators (persons) only. The server exchanges `client_id` and `client_secret` for a token at `POST /login` ' +
      'with `grant_type=client_credentials`; the token acts with the given role in this organisation, limited to its `scopes` ' +
      '(an endpoint outside them answers 403 `insufficient_scope`), from its `allowed_ips` (elsewhere: 401 at the token grant, 403 on use), ' +
      'until `expires_at` (then 401).',
    security: bearer,
    request: { body: jsonBody(createApiClientBody.meta({ id: 'CreateApiClientRequest' })) },
    responses: {
      201: json(ApiClient, 'Created'),
      ...errors(401, 415, 422, 429),
      400: errorResponse('A bad name or role, a scope unknown or beyond the role, a malformed address, or expires_at not in the future'),
      403: forbidden,
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/api-clients',
    operationId: 'listApiClients',
    tags: [TAGS.auth],
    summary: "The organisation's API clients",
    security: bearer,
    responses: { 200: json(apiClientList.meta({ id: 'ApiClientList' })), ...errors(401, 429), 403: forbidden },
  });

  registry.registerPath({
    method: 'post',
    path: '/api-clients/{client_id}/adopt',
    operationId: 'adoptApiClient',
    tags: [TAGS.auth],
    summary: 'Take over an API client',
    description:
      'The caller becomes `created_by`. A client acts only while the administrator it acts for is enabled and an organisation administrator; ' +
      'adopting a `suspended` client makes it `active` again. Tokens issued before the adoption stay refused: the server obtains a new one with its secret.',
    security: bearer,
    request: { params: z.object({ client_id: z.string().meta({ example: 'cli_0123456789abcdef01234567' }) }) },
    responses: {
      200: json(listedApiClient.meta({ id: 'ApiClient' }), 'Adopted'),
      ...errors(401, 429),
      403: forbidden,
      404: errorResponse('API client not found'),
    },
  });

  registry.registerPath({
    method: 'post',
    path: '/api-clients/{client_id}/rotate',
    operationId: 'rotateApiClient',
    tags: [TAGS.auth],
    summary: "Replace an API client's secret",
    description: 'A new secret, shown once in this answer (`Cache-Control: no-store`). The old secret and every token issued under it stop working at once.',
    security: bearer,
    request: { params: z.object({ client_id: z.string().meta({ example: 'cli_0123456789abcdef01234567' }) }) },
    responses: {
      200: json(listedApiClient.extend({ client_secret: z.string().meta({ description: 'Shown once' }) }).meta({ id: 'RotatedApiClient' }), 'Rotated'),
      ...errors(401, 429),
      403: forbidden,
      404: errorResponse('API client not found'),
    },
  });

  registry.registerPath({
    method: 'delete',
    path: '/api-clients/{client_id}',
    operationId: 'deleteApiClient',
    tags: [TAGS.auth],
    summary: 'Delete an API client',
    description: "Its tokens stop working at once.",
    security: bearer,
    request: { params: z.object({ client_id: z.string().meta({ example: 'cli_0123456789abcdef01234567' }) }) },
    responses: { 204: { description: 'Deleted' }, ...errors(401, 429), 403: forbidden, 404: errorResponse('API client not found') },
  });
}
