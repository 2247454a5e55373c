import { CODE_FAILURE_WINDOW_SECONDS, MAX_CODE_FAILURES } from '../mfa/index.ts';
import { bearer, errorResponse, errors, formBody, json, md, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
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

/** The operation's own rules, markdown (shown under it at /docs; the tag's guide is auth.guide.md). */
const LOGIN = md(
  'No bearer token. `application/x-www-form-urlencoded` only (JSON gets 415). Two OAuth 2.0 grants:',
  '',
  '- `grant_type=password` (the default when `grant_type` is absent): fields `username`, `password`. Answer `{"access_token", ' +
    '"token_type": "bearer", "expires_in": 3600, "scope"}`, plus `"require_password_change": true` on a first login. Wrong username or ' +
    'password: 401 `Incorrect username or password` (the same for both). Repeated failures are limited (sign-in protection, below): 429 ' +
    'with `Retry-After`. A user with two-factor sign-in on also sends `otp` (below).',
  '- `grant_type=client_credentials`: an API client\'s `client_id` and `client_secret`, either as form fields or as HTTP Basic ' +
    'credentials (`Authorization: Basic base64(client_id:client_secret)`, RFC 6749 section 2.3.1), not both (400). Same token answer. ' +
    'Wrong id or secret: 401 `Incorrect client credentials`. The right credentials of a suspended client: 401 `{"detail": "API client ' +
    'suspended: ...", "code": "api_client_suspended", "error": "invalid_client", ...}`, on either grant. With the right secret, a client ' +
    'past its `expires_at` gets 401 `This API client has expired`, and one used from an address outside its `allowed_ips` 401 `This API ' +
    'client may not be used from this address`, both failed client authentications (`"error": "invalid_client"`, `WWW-Authenticate: ' +
    'Basic`). The token carries the client\'s scopes (`scope`, space-separated).',
  '- `scope` (either grant; RFC 6749 section 3.3): space-delimited scopes (the table under API clients) that narrow the token to exactly ' +
    'those named (order and repeats mean nothing). Each must be one the API client has, or one the user\'s role allows (a `member`: not ' +
    '`topup`; a platform administrator: none); an unknown, empty or unallowed scope is 400 `{"detail": "scope: ...", "error": ' +
    '"invalid_scope", "error_description": ...}` (judged after the credentials, for an unallowed one). Left out, the token has everything ' +
    'allowed, and no more. The answer always carries `scope`, the granted scopes space-delimited in the table\'s order (`""` for a platform ' +
    'administrator). Asking for every scope the role allows is the same as asking for none; what a narrowed token may then call is in the tag.',
  '- Client credentials are checked on every grant that carries them (RFC 6749 section 3.2.1): a password grant sent with a wrong ' +
    '`Authorization: Basic` client header (or wrong `client_id`/`client_secret` fields) is refused as `invalid_client` even when the ' +
    'password is right, and nothing is counted against the username. A Basic header with an empty id and secret (`Basic Og==`, what ' +
    'Swagger UI sends when its client fields are left empty) names no client. A right client may sign in only people of its own organisation.',
  '',
  '**Errors** follow RFC 6749 section 5.2: besides the usual `detail`, every error body carries `error` and `error_description` (the same text as `detail`):',
  '',
  '| status | `error` | when |',
  '|---|---|---|',
  '| 400 | `invalid_request` | a parameter missing (`Field required: password`), empty, or sent more than once (`Parameter sent more than once: ' +
    'password`); client credentials both in Basic and in the form. Unlike the rest of the API, a missing field here is 400, not 422 |',
  '| 400 | `unsupported_grant_type` | `grant_type` other than `password` or `client_credentials` |',
  '| 400 | `unauthorized_client` | an API client signing in a person of another organisation |',
  '| 401 | `invalid_grant` | wrong username or password: `Incorrect username or password`, `WWW-Authenticate: Bearer` (status and detail as always) |',
  '| 401 | `invalid_client` | client authentication failed (unknown client, wrong secret, a Basic header that does not decode): `Incorrect ' +
    'client credentials`, `WWW-Authenticate: Basic realm="idverify"` |',
  '| 413, 415 | `invalid_request` | body too large or too many parameters; a body that is not form-encoded |',
  '',
  '429 (sign-in protection) and 503 keep their usual bodies.',
  '',
  '**Two-factor sign-in.** A user who turned it on sends the form field `otp`: the 6-digit code of the authenticator app, or one of the ' +
    'recovery codes. Without it: 401 `{"detail": "A one-time code is required", "code": "mfa_required"}`; a wrong, reused or spent one: ' +
    '401 `{"detail": "Invalid one-time code", "code": "mfa_invalid"}`. A wrong password answers `Incorrect username or password` whatever ' +
    'the code. For the sign-in protection a sign-in counts as failed until it fully succeeds: a right password with a missing or wrong code ' +
    `keeps its failure point. A wrong code also counts towards the user's code failures, from any address (429 with \`Retry-After\` past ` +
    `${MAX_CODE_FAILURES} in ${CODE_FAILURE_WINDOW_SECONDS / 60} minutes; see the tag). Signing in with a recovery code ends the user's other sessions: ` +
    'every earlier token answers 401, in every API process at once. API clients have no second factor (they use their secret, scopes and address list).',
  '',
  '**Sign-in protection.** Two counters: consecutive failures for one username from one client address (`LOGIN_MAX_FAILURES`), and ' +
    'failures from one client address for any username (`LOGIN_MAX_FAILURES_PER_ADDRESS`); past either, attempts from that address are ' +
    'refused with 429 until `LOGIN_LOCK_SECONDS` after the last counted failure. Each attempt takes a failure point from both *before* ' +
    'the password is checked, and gives it back when the password is right; so of N parallel wrong guesses for one username from one ' +
    'address exactly `LOGIN_MAX_FAILURES` get 401 and the rest 429 (with `Retry-After`), and a guess arriving while the limit is reached ' +
    'is refused without being checked. A success clears only its own username-and-address count. An attacker elsewhere therefore cannot ' +
    'lock the owner out: a locked username is locked only for the address that failed. Users behind one address (an office NAT) share ' +
    'that address\'s counter; set `TRUST_PROXY` when the API runs behind a reverse proxy, or every client looks like the proxy. When Redis ' +
    '(which keeps the counters) is out of reach, sign-in answers 503 (it never signs in unguarded).',
);

const ME = md(
  'Any valid token, also one whose user must first change their password or enrol in two-factor sign-in.',
  '',
  '```json',
  '{"id": 2, "username": "demo-admin", "role": "org_admin",',
  ' "organisation": {"id": 1, "org_number": 1, "name": "Sandbox Demo Ltd", "subscription_active": true,',
  '   "tenancy": "hosted", "affiliate": false, "units": 100, "reserved_units": 0, "lifetime_units": 0,',
  '   "unit_cost": 10000, "min_topup_units": 100, "loyalty_badge": null}}',
  '```',
  '',
  "Team members see the organisation's `id`, `org_number`, `name` and `subscription_active` only. `units` is the settled balance; " +
    '`reserved_units` are held by verifications in flight. `loyalty_badge` is `silver`, `gold`, `diamond` (self-hosted tenants at ' +
    '20k/30k/50k lifetime units) or `null`. With an API client\'s token: `{"id": null, "username": null, "client_id", "name", "role", "organisation": {...}}`.',
);

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
    description: LOGIN,
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
      description: ME,
      security: bearer,
      responses: { 200: json(Me), ...errors(401, 429) },
    });
  }
}
