import { z } from 'zod';
import { bearer, errorResponse, errors, json, jsonBody, md, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { registerMfa } from './mfa.openapi.ts';
import { apiClientList, apiClientPathParams, changePasswordBody, createApiClientBody, createdApiClient, detailResponse, forgotPasswordBody, listedApiClient, resetPasswordBody } from './accounts.schemas.ts';

/** The operations' own rules, markdown (shown under each operation at /docs; the tag's guide is accounts.guide.md). */
const FIRST_LOGIN = 'A first-login token (`require_password_change`) may call it.';

const CHANGE_PASSWORD = md(
  'A user\'s bearer token (an API client\'s token: 403, it has no password). `{"current_password": "...", "new_password": "..."}` answers ' +
    '200 `{"detail": "Password changed"}`. Every token of the user issued before the change stops working at once, the one that made the ' +
    `call included (the answer carries no token: log in again). ${FIRST_LOGIN}`,
  '',
  'Refusals, all 400 with these details:',
  '',
  '- `Current password is incorrect` (it also counts as a failed sign-in, like a wrong password at `POST /login`: past the limit both answer 429);',
  '- `New password must be at least 8 characters`;',
  '- `New password must not contain control characters` (tab and DEL; NUL and the other C0 characters are refused earlier, as for every ' +
    'field, with `new_password: must not contain control characters`);',
  '- `New password must not be the username`, `New password must not contain the username` (for usernames of 3 characters or more): ' +
    'compared as NFKC-normalised, case-folded text (`ＢＥＲＴ-2024` contains `bert`);',
  '- `New password must not be the current password`.',
);

const FORGOT_PASSWORD = md(
  'No bearer token. `{"username": "..."}` always answers 202 `{"detail": "If the account exists, a reset link has been sent"}`, for ' +
    'known and unknown usernames alike. The lookup and the e-mail happen after the answer has been sent, so its timing tells nothing either.',
  '',
  '- An enabled user with an e-mail address receives a token (256 random bits) that is valid 30 minutes and usable once, and a link when ' +
    '`PASSWORD_RESET_URL` is set. The token is stored only as its SHA-256 digest.',
  '- At most 3 such e-mails per user per 30 minutes, however many requests arrive at once (the count and the new token are one step under a per-user lock).',
  '- A disabled user, or a user of a retired organisation, is sent nothing.',
);

const RESET_PASSWORD = md(
  'No bearer token. `{"token": "...", "new_password": "..."}` answers 200 `{"detail": "Password changed"}`, ends every earlier token of ' +
    'the user, clears a first-login requirement and voids the user\'s other reset tokens.',
  '',
  '- A used, expired or unknown token, and the token of a user who has since been disabled or whose organisation was retired, is 400 ' +
    '`Invalid or expired reset token`: disabling a user (by an operator or an administrator) or retiring the organisation voids every ' +
    'outstanding reset token at once, and re-enabling does not revive them. (A reset e-mail already in the outbox when the user is ' +
    'disabled is still delivered; the token it carries is void.)',
  '- A new password that breaks a rule of `POST /change-password`: 400 naming the rule, and the reset token stays usable.',
);

const MANAGERS =
  'Organisation administrators who are persons. Team members get 403 `Only organisation administrators may do this`; an API client\'s ' +
  'token, whatever its role, gets 403 `API clients may not manage API clients or the team`.';

const CREATE_CLIENT = md(
  `${MANAGERS} \`{"name": "KYC backend", "role": "member" | "org_admin", "scopes"?: [...], "allowed_ips"?: [...], "allow_any"?: false, ` +
    '"expires_at"?: "2027-01-31T00:00:00Z"}` answers 201 `{"client_id": "cli_...", "client_secret": "...", "name", "role", "created_at", ' +
    '"scopes", "allowed_ips", "expires_at"}`. The secret is shown in this answer only; the service keeps its SHA-256 digest (a 256-bit ' +
    'random secret needs no slow hash). A `role` other than the two: 400; a missing field: 422. The server exchanges `client_id` and ' +
    '`client_secret` for a token at `POST /login` with `grant_type=client_credentials` (see the tag for what it may then call).',
  '',
  '- `scopes`: what the client may do, from `verify`, `requery`, `history:read`, `topup`, `webhooks`, `links`. Default: all its role ' +
    'allows (`topup` only for an `org_admin` or `finance` client, `webhooks` and `links` only for an `org_admin` client). A scope beyond ' +
    'the role (`topup` for a `member` client), an unknown scope or an empty list: 400 naming it. An endpoint outside them answers 403 `insufficient_scope`.',
  '- `allowed_ips`: IPv4 and IPv6 addresses and CIDR ranges (`203.0.113.0/24`, `2001:db8::/32`) the client may be used from, compared ' +
    'with the client address as the sign-in protection sees it (behind a proxy: set `TRUST_PROXY`); elsewhere: 401 at the token grant, ' +
    '403 on use. Default, or empty: any address. A malformed entry: 400. An address with a zone id (`fe80::1%eth0`) is 400 `... has a ' +
    'zone id (%...); give the address without it`. An entry that matches every address (of a family) is taken only with ' +
    '`"allow_any": true`, else 400 `allowed_ips: "0.0.0.0/0" matches every address; set "allow_any": true if that is meant`: any /0 ' +
    '(`0.0.0.0/0`, `::/0`, `1.2.3.4/0`), the unspecified addresses `0.0.0.0` and `::`, and an IPv6 range holding every mapped IPv4 ' +
    'address (`::ffff:0:0/96`, `::/64`).',
  '- `expires_at`: an instant (see "Conventions in detail" in the introduction) in the future (else 400); after it the client cannot get ' +
    'a token and its tokens answer 401 at once. Default: never.',
);

const LIST_CLIENTS = md(
  `${MANAGERS} \`{"data": [{"client_id", "name", "role", "created_at", "last_used_at", "created_by": {"id", "username"}, "status": ` +
    '"active" | "suspended", "scopes", "allowed_ips", "expires_at"}]}`: the organisation\'s clients, never a secret. `last_used_at` is when ' +
    'it last obtained a token; `created_by` is the administrator the client acts for, `null` only for a client whose creator is unknown, ' +
    'which is `suspended` (see the tag). Clients created before scopes existed show, and have, all their role allows.',
);

export function register(registry: OpenAPIRegistry): void {
  registerMfa(registry);
  const Detail = detailResponse.meta({ id: 'Detail' });

  registry.registerPath({
    method: 'post',
    path: '/change-password',
    operationId: 'changePassword',
    tags: [TAGS.auth],
    summary: "Change the caller's password",
    description: CHANGE_PASSWORD,
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
    description: `A bearer token; answers 204. That token stops working at once; other tokens of the same user do not. ${FIRST_LOGIN}`,
    security: bearer,
    responses: { 204: { description: 'Logged out' }, ...errors(401, 429) },
  });

  registry.registerPath({
    method: 'post',
    path: '/forgot-password',
    operationId: 'forgotPassword',
    tags: [TAGS.auth],
    summary: 'Ask for a password-reset e-mail',
    description: FORGOT_PASSWORD,
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
    description: RESET_PASSWORD,
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
    description: CREATE_CLIENT,
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
    description: LIST_CLIENTS,
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
      `${MANAGERS} No body; answers 200 with the client as listed: the caller becomes \`created_by\`. A client acts only while the administrator it acts for is ` +
      'enabled and an organisation administrator; adopting a `suspended` client makes it `active` again. Tokens issued before the adoption ' +
      'stay refused: the server obtains a new one with its unchanged secret. Another organisation\'s client or an unknown id: 404 `API client not found`.',
    security: bearer,
    request: { params: apiClientPathParams },
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
    description:
      `${MANAGERS} No body; answers 200 with the client as listed and its new \`client_secret\`, shown this once (\`Cache-Control: no-store\`). ` +
      'From then on the old secret gets 401 at `POST /login` and every token issued under it stops working at once; scopes, addresses, ' +
      'expiry and `created_by` stay. Another organisation\'s client or an unknown id: 404 `API client not found`. It leaves an `api_client.rotated` audit event.',
    security: bearer,
    request: { params: apiClientPathParams },
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
    description: `${MANAGERS} Answers 204 and the client's tokens stop working at once; an unknown or already deleted id, or another organisation's, answers 404 \`API client not found\`.`,
    security: bearer,
    request: { params: apiClientPathParams },
    responses: { 204: { description: 'Deleted' }, ...errors(401, 429), 403: forbidden, 404: errorResponse('API client not found') },
  });
}
