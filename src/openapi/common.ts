import { OpenAPIRegistry, type ResponseConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { SCOPE_DESCRIPTIONS } from '../lib/api-scopes.ts';
import { cursorParam, limitParam, timeBoundParam } from '../lib/pagination.ts';

// Schemas are named and described with zod's own `.meta({ id, description, example })`, which
// zod-to-openapi reads. Not its `.openapi()`: that method is patched onto zod's prototype and zod
// copies it only onto schemas built after the patch, so it would depend on import order.

export { OpenAPIRegistry };

/** What each `<module>.openapi.ts` exports: it registers its paths next to its own schemas. */
export type RegisterOpenApi = (registry: OpenAPIRegistry) => void;

export const BEARER = 'bearerAuth';
export const OAUTH2 = 'oauth2';
/** A bearer token, however it was obtained: pasted, or fetched by an OAuth 2.0 client from POST /v1/login. */
export const bearer: Record<string, string[]>[] = [{ [BEARER]: [] }, { [OAUTH2]: [] }];
/** The health endpoints live outside the versioned base. */
export const unversioned = [{ url: '/', description: 'Service root (outside the versioned base)' }];

export const TAGS = {
  auth: 'Authentication',
  team: 'Team',
  verification: 'Verification',
  batches: 'Batches',
  reasons: 'Reasons',
  topup: 'Top-up',
  webhooks: 'Inbound webhooks',
  webhookEndpoints: 'Webhooks',
  links: 'Verification links',
  platform: 'Platform administration',
  history: 'History',
  audit: 'Audit trail',
  ops: 'Service',
} as const;

export type TagName = (typeof TAGS)[keyof typeof TAGS];

/** Each tag's one-line summary; the longer prose of a tag is its guide (document.ts, TAG_GUIDES). */
/** An operation's rules as markdown, one source line per element (shown under the operation at /docs). */
export const md = (...lines: string[]): string => lines.join('\n');

export const TAG_DESCRIPTIONS: Record<TagName, string> = {
  Authentication: 'Tokens (OAuth 2.0 password and client credentials grants), the caller, passwords and API clients.',
  Team: "An organisation administrator manages the organisation's users.",
  Verification: 'NIN, vNIN, phone and demography lookups against the identity authority, each paid with one unit; match-only, asynchronous, requery and slips.',
  Batches: 'Up to 50,000 NINs, vNINs or phone numbers in one request, looked up in the background and followed by polling.',
  Reasons: 'The lawful reasons a verification may give.',
  'Top-up': 'Buying units through the payment processor.',
  'Inbound webhooks': "The payment processor's signed notifications.",
  Webhooks: "The organisation's own endpoints: signed events pushed to its servers when verifications, batches and top-ups end.",
  'Verification links': 'A URL the organisation sends a person, who verifies themselves on a phone with a vNIN and a selfie, giving their own consent.',
  'Platform administration': "The operator's view of every organisation.",
  History: 'The ledger, top-ups, verifications and daily usage of an organisation, a page at a time or as CSV.',
  'Audit trail': 'Who did what, when and from where, on an append-only, hash-chained trail.',
  Service: 'Health, readiness and this document.',
};

export const errorBody = z
  .object({ detail: z.string().meta({ example: 'Could not validate credentials' }) })
  .meta({ id: 'Error', description: 'Every error answers with this body.' });

export const validationErrorBody = z
  .object({
    detail: z.string().meta({ example: 'Field required: nin' }),
    errors: z.array(
      z.object({
        loc: z.array(z.string()).meta({ description: 'Path of the offending field' }),
        msg: z.string(),
        type: z.string().meta({ description: 'zod issue code, e.g. invalid_type' }),
      }),
    ),
  })
  .meta({ id: 'ValidationError', description: 'A missing field or a value of the wrong type (422).' });

export const upstreamErrorBody = z
  .object({
    detail: z.string(),
    reference_id: z
      .string()
      .regex(/^REF-[A-Z0-9]{12}$/)
      .optional()
      .meta({ description: 'Quote it to requery after 30 s; present when a verification was recorded.' }),
    code: z.string().optional().meta({ description: 'Machine-readable failure cause, e.g. upstream_unavailable' }),
  })
  .meta({ id: 'UpstreamError', description: 'Outcome unknown or upstream failed (502/504): nothing was debited; requery with the reference_id.' });

export const serverErrorBody = z
  .object({ detail: z.string(), request_id: z.string().optional().meta({ description: 'Quote it to support' }) })
  .meta({ id: 'ServerError' });

const retryAfter = { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' as const } } };

/** Shared error responses, registered once under components.responses and referenced by status. */
const ERROR_SCHEMAS = { Error: errorBody, ValidationError: validationErrorBody, UpstreamError: upstreamErrorBody, ServerError: serverErrorBody };

const ERROR_RESPONSES = {
  400: { name: 'BadRequest', description: 'A well-typed value breaks a rule (e.g. units not a multiple of 100, unknown reason).', schema: 'Error' },
  401: {
    name: 'Unauthorized',
    description: 'Token missing, expired or invalid.',
    schema: 'Error',
    headers: { 'WWW-Authenticate': { description: 'Always `Bearer`', schema: { type: 'string' as const } } },
  },
  402: { name: 'PaymentRequired', description: 'Insufficient units in organisation wallet.', schema: 'Error' },
  403: { name: 'Forbidden', description: 'Valid token without permission for this action (or a cross-origin browser call).', schema: 'Error' },
  404: { name: 'NotFound', description: 'The referenced resource does not exist.', schema: 'Error' },
  406: { name: 'NotAcceptable', description: 'The Accept header allows none of the representations this endpoint offers.', schema: 'Error' },
  409: { name: 'Conflict', description: 'Conflicts with an earlier request (e.g. an Idempotency-Key reused with another body, or still in progress).', schema: 'Error' },
  413: { name: 'PayloadTooLarge', description: 'Request body too large.', schema: 'Error' },
  415: { name: 'UnsupportedMediaType', description: 'Wrong Content-Type for this endpoint.', schema: 'Error' },
  422: { name: 'ValidationFailed', description: 'Payload validation error: missing field or wrong type.', schema: 'ValidationError' },
  429: { name: 'TooManyRequests', description: 'Rate-limited; retry after Retry-After seconds, with backoff.', schema: 'Error', headers: retryAfter },
  500: { name: 'InternalError', description: 'Unexpected server error.', schema: 'ServerError' },
  502: { name: 'BadGateway', description: 'The identity authority failed; nothing was debited.', schema: 'UpstreamError' },
  503: { name: 'ServiceUnavailable', description: 'A dependency is unavailable; nothing was done. Retry with backoff.', schema: 'ServerError', headers: retryAfter },
  504: { name: 'GatewayTimeout', description: 'No answer in time; the outcome is unknown. Wait 30 s, then requery with the reference_id.', schema: 'UpstreamError' },
} as const;

export type ErrorStatus = keyof typeof ERROR_RESPONSES;

export function registerCommon(registry: OpenAPIRegistry): void {
  registry.registerComponent('securitySchemes', BEARER, {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'Access token from `POST /login`, sent as `Authorization: Bearer <token>`. Lifetime 60 minutes.',
  });
  registry.registerComponent('securitySchemes', OAUTH2, {
    type: 'oauth2',
    description:
      'The same bearer token, obtained by an OAuth 2.0 client at the token endpoint: a person with the password grant, ' +
      "a server with the client credentials grant (an API client's client_id and client_secret, in HTTP Basic or the form).",
    flows: {
      password: { tokenUrl: '/v1/login', scopes: { ...SCOPE_DESCRIPTIONS } },
      clientCredentials: { tokenUrl: '/v1/login', scopes: { ...SCOPE_DESCRIPTIONS } },
    },
  });
  for (const r of Object.values(ERROR_RESPONSES)) {
    registry.registerComponent('responses', r.name, {
      description: r.description,
      ...('headers' in r ? { headers: r.headers } : {}),
      content: { 'application/json': { schema: { $ref: `#/components/schemas/${r.schema}` } } },
    });
  }
}

/** Given to the generator beside the routes: the responses above reference them by name only. */
export const COMMON_SCHEMAS = Object.values(ERROR_SCHEMAS).map((schema) => ({ type: 'schema' as const, schema }));

/** References to the shared error responses; 500 and 503 can come from any endpoint. */
export function errors(...statuses: ErrorStatus[]): Record<string, { $ref: string }> {
  const out: Record<string, { $ref: string }> = {};
  for (const s of [...statuses, 500, 503] as ErrorStatus[]) out[String(s)] = { $ref: `#/components/responses/${ERROR_RESPONSES[s].name}` };
  return out;
}

/** An error status whose meaning on this endpoint is more specific than the shared one. */
export function errorResponse(description: string, schema: z.ZodType = errorBody): ResponseConfig {
  return { description, content: { 'application/json': { schema } } };
}

export function json(schema: z.ZodType, description = 'OK'): ResponseConfig {
  return { description, content: { 'application/json': { schema } } };
}

export const jsonBody = (schema: z.ZodType) => ({ required: true, content: { 'application/json': { schema } } });
export const formBody = (schema: z.ZodType) => ({ required: true, content: { 'application/x-www-form-urlencoded': { schema } } });

/** Every verification mode answers inside this envelope. */
export function dataEnvelope<S extends z.ZodType>(schema: S) {
  return z.object({ data: schema });
}

/** Compile-time proof that a documented response schema matches the type a service returns. */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export type Assert<T extends true> = T;

/**
 * The query parameters every paged list shares: the parsing schemas themselves (src/lib/pagination.ts),
 * described here, so that the document states exactly the rule the server applies.
 */
export const pageParams = {
  limit: limitParam.meta({ description: 'Rows per page, 1 to 200 (default 50); above 200 is a 400' }),
  cursor: cursorParam.meta({ description: 'The `next_cursor` of the previous page; opaque' }),
};

/** The history lists' time range and page. */
export const listParams = {
  from: timeBoundParam('from')
    .meta({
      description: 'First day included, YYYY-MM-DD in Lagos time (UTC+1), or the first instant included, an ISO 8601 date-time with a zone (`Z` or ±HH:MM)',
      example: '2026-03-01',
    })
    .optional(),
  to: timeBoundParam('to')
    .meta({
      description: 'Last day included, YYYY-MM-DD in Lagos time (UTC+1), or the last instant included (to the millisecond), an ISO 8601 date-time with a zone',
      example: '2026-03-31T18:00:00+01:00',
    })
    .optional(),
  ...pageParams,
};

/** A page of a history list: newest first, `next_cursor` null on the last page. */
export function listEnvelope<S extends z.ZodType>(item: S) {
  return z.object({
    data: z.array(item),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null when this is the last page' }),
  });
}
