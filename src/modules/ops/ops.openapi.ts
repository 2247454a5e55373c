import { z } from 'zod';
import { errorResponse, json, TAGS, unversioned, type OpenAPIRegistry } from '../../openapi/common.ts';

// Written by hand in createApp (src/server.ts); described here so the document covers every route the API answers.
const health = z.object({ status: z.literal('ok') });
const face = z.enum(['ready', 'no_worker']).meta({ description: 'Whether a face worker (model loaded) is taking face matches; it does not decide readiness: without one only `POST /verify-nin/face` fails (503)' });
const ready = z.object({ status: z.literal('ready'), postgres: z.literal('ok'), redis: z.literal('ok'), face });
const notReady = z.object({ detail: z.literal('Not ready'), postgres: z.enum(['ok', 'down']), redis: z.enum(['ok', 'down']), face });

// The one refusal a public read can get: the CORS policy answers every route, these too.
const crossOrigin = { 403: errorResponse('A browser call from an origin outside CORS_ALLOWED_ORIGINS') };

export function register(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/healthz',
    operationId: 'healthz',
    tags: [TAGS.ops],
    summary: 'Liveness',
    description: 'Answers while the process runs; checks no dependency. Outside the versioned base.',
    servers: unversioned,
    security: [],
    responses: { 200: json(health.meta({ id: 'Health' }), 'Alive'), ...crossOrigin },
  });
  registry.registerPath({
    method: 'get',
    path: '/readyz',
    operationId: 'readyz',
    tags: [TAGS.ops],
    summary: 'Readiness',
    description: 'Ready when PostgreSQL and Redis answer; `face` says whether a face worker is serving face matches. Outside the versioned base.',
    servers: unversioned,
    security: [],
    responses: {
      200: json(ready.meta({ id: 'Ready' }), 'Ready to serve'),
      503: json(notReady.meta({ id: 'NotReady' }), 'A dependency is down; take the instance out of rotation'),
      ...crossOrigin,
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/openapi.json',
    operationId: 'getOpenApiDocument',
    tags: [TAGS.ops],
    summary: 'This OpenAPI 3.1 document',
    description: 'The reference of this API, built from the schemas the server validates with. Tools that read only OpenAPI 3.0 take `GET /openapi-3.0.json`.',
    security: [],
    responses: { 200: json(z.record(z.string(), z.unknown()).meta({ description: 'OpenAPI 3.1 document' }), 'The document'), ...crossOrigin },
  });
  registry.registerPath({
    method: 'get',
    path: '/openapi-3.0.json',
    operationId: 'getOpenApiDocument30',
    tags: [TAGS.ops],
    summary: 'This document in OpenAPI 3.0',
    description:
      'The same API as `GET /openapi.json`, generated from the same schemas in OpenAPI 3.0.3 for tools that cannot read 3.1 ' +
      "(Go's kin-openapi and oapi-codegen, openapi-generator's older templates): `nullable: true` where 3.1 has a `null` type, " +
      '`example` for `examples`, a one-value `enum` for `const`.',
    security: [],
    responses: { 200: json(z.record(z.string(), z.unknown()).meta({ description: 'OpenAPI 3.0.3 document' }), 'The document'), ...crossOrigin },
  });
}
