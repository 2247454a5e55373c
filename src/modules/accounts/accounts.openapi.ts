import { z } from 'zod';
import { bearer, errorResponse, errors, json, jsonBody, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { apiClientList, changePasswordBody, createApiClientBody, createdApiClient, detailResponse, forgotPasswordBody, resetPasswordBody } from './accounts.schemas.ts';

export function register(registry: OpenAPIRegistry): void {
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
      'with `grant_type=client_credentials`; the token acts with the given role in this organisation.',
    security: bearer,
    request: { body: jsonBody(createApiClientBody.meta({ id: 'CreateApiClientRequest' })) },
    responses: { 201: json(ApiClient, 'Created'), ...errors(400, 401, 415, 422, 429), 403: forbidden },
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
