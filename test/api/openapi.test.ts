import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Express } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApp } from '../../src/server.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { buildOpenApiDocument, SANDBOX_BASE_URL } from '../../src/api-document/document.ts';
import { createApiDeps } from '../../src/wiring.ts';
import { startStack, type Stack } from '../setup/harness.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
/** Operator and documentation surfaces: mounted by the app, deliberately not part of the integrators' API. */
// `/v/...`: a verification link's page and its own form post, for the person who opens the link.
const NOT_API = [/^\/favicon\.ico$/, /^\/portal(\/|$)/, /^\/metrics$/, /^\/admin\/queues(\/|$)/, /^\/admin\/organisations$/, /^\/docs(\/|$)/, /^\/v\//, /^\/r\//];

// ---- OpenAPI 3.1 structure (no validator package is installed; this checks the shape we rely on) ----
const ext = z.record(z.string().regex(/^x-/), z.unknown());
const ref = z.strictObject({ $ref: z.string(), summary: z.string().optional(), description: z.string().optional() });
const orRef = <T extends z.ZodType>(s: T) => z.union([ref, s]);
const server = z.looseObject({ url: z.string().min(1), description: z.string().optional() });
const schemaObject = z.union([z.boolean(), z.record(z.string(), z.unknown())]);
const mediaType = z.looseObject({ schema: schemaObject.optional(), example: z.unknown().optional(), examples: z.record(z.string(), z.unknown()).optional() });
const header = z.looseObject({ description: z.string().optional(), required: z.boolean().optional(), schema: schemaObject.optional() });
const parameter = z
  .looseObject({
    name: z.string().min(1),
    in: z.enum(['query', 'header', 'path', 'cookie']),
    description: z.string().optional(),
    required: z.boolean().optional(),
    schema: schemaObject.optional(),
    content: z.record(z.string(), mediaType).optional(),
  })
  .refine((p) => p.in !== 'path' || p.required === true, 'path parameters must be required')
  .refine((p) => (p.schema === undefined) !== (p.content === undefined), 'a parameter has exactly one of schema and content');
const response = z.looseObject({
  description: z.string(),
  headers: z.record(z.string(), orRef(header)).optional(),
  content: z.record(z.string().regex(/^[\w.+-]+\/[\w.+*-]+$/), mediaType).optional(),
});
const securityRequirement = z.record(z.string(), z.array(z.string()));
const operation = z.looseObject({
  operationId: z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/),
  summary: z.string().optional(),
  description: z.string().optional(),
  tags: z.array(z.string()).optional(),
  parameters: z.array(orRef(parameter)).optional(),
  requestBody: orRef(z.looseObject({ description: z.string().optional(), required: z.boolean().optional(), content: z.record(z.string(), mediaType) })).optional(),
  responses: z
    .record(z.string().regex(/^([1-5](\d\d|XX)|default)$/), orRef(response))
    .refine((r) => Object.keys(r).length > 0, 'an operation needs responses'),
  security: z.array(securityRequirement).optional(),
  servers: z.array(server).optional(),
  deprecated: z.boolean().optional(),
})
  // A success response, except for a retired (deprecated) operation that answers 410 to everyone.
  .refine((o) => Object.keys(o.responses).some((s) => /^2/.test(s)) || (o.deprecated === true && '410' in o.responses), {
    message: 'an operation needs a success response',
    path: ['responses'],
  });
const pathItem = z.looseObject({
  summary: z.string().optional(),
  description: z.string().optional(),
  servers: z.array(server).optional(),
  parameters: z.array(orRef(parameter)).optional(),
  ...Object.fromEntries(METHODS.map((m) => [m, operation.optional()])),
});
const openApi31 = z
  .strictObject({
    openapi: z.string().regex(/^3\.1\.\d+$/),
    info: z.looseObject({ title: z.string().min(1), version: z.string().min(1), description: z.string().optional() }),
    jsonSchemaDialect: z.string().optional(),
    servers: z.array(server).optional(),
    paths: z.record(z.string().regex(/^\//), pathItem),
    webhooks: z.record(z.string(), orRef(pathItem)).optional(),
    components: z
      .strictObject({
        schemas: z.record(z.string().regex(/^[A-Za-z0-9._-]+$/), schemaObject).optional(),
        responses: z.record(z.string(), orRef(response)).optional(),
        parameters: z.record(z.string(), orRef(parameter)).optional(),
        headers: z.record(z.string(), orRef(header)).optional(),
        requestBodies: z.record(z.string(), z.unknown()).optional(),
        examples: z.record(z.string(), z.unknown()).optional(),
        securitySchemes: z
          .record(
            z.string(),
            z.looseObject({ type: z.enum(['apiKey', 'http', 'mutualTLS', 'oauth2', 'openIdConnect']), scheme: z.string().optional() }),
          )
          .optional(),
        links: z.record(z.string(), z.unknown()).optional(),
        callbacks: z.record(z.string(), z.unknown()).optional(),
        pathItems: z.record(z.string(), z.unknown()).optional(),
      })
      .optional(),
    security: z.array(securityRequirement).optional(),
    tags: z.array(z.looseObject({ name: z.string(), description: z.string().optional() })).optional(),
    externalDocs: z.looseObject({ url: z.string() }).optional(),
  })
  .and(ext.or(z.object({})));

type Doc = ReturnType<typeof buildOpenApiDocument>;
type Op = z.infer<typeof operation>;

function operationsOf(doc: Doc): { method: string; path: string; op: Op }[] {
  return Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
    METHODS.filter((m) => (item as Record<string, unknown>)[m]).map((m) => ({ method: m, path, op: (item as Record<string, Op>)[m]! })),
  );
}

function collectRefs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) collectRefs(n, out);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else collectRefs(v, out);
    }
  }
  return out;
}

function resolvePointer(doc: unknown, pointer: string): unknown {
  if (!pointer.startsWith('#/')) return undefined;
  return pointer
    .slice(2)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), doc);
}

// ---- express 5 router walk ----
type Layer = {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle: { stack?: Layer[]; router?: { stack: Layer[] } };
  rawPath?: string | string[] | RegExp;
  slash?: boolean;
};

/** Every method and path the app answers, with mount prefixes joined, as `GET /v1/me`. */
function mountedRoutes(stack: Layer[], prefix = ''): string[] {
  const out: string[] = [];
  for (const layer of stack) {
    if (layer.route) {
      const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
      for (const p of paths) {
        for (const m of Object.keys(layer.route.methods).filter((x) => x !== '_all')) out.push(`${m.toUpperCase()} ${join(prefix, p)}`);
      }
      continue;
    }
    const inner = layer.handle.stack ?? layer.handle.router?.stack;
    if (!inner) continue;
    const raw = layer.rawPath;
    if (typeof raw !== 'string') throw new Error(`cannot read the mount path of a router layer (${String(raw)}): has express's router changed?`);
    out.push(...mountedRoutes(inner, layer.slash || raw === '/' ? prefix : join(prefix, raw)));
  }
  return out;
}

function join(a: string, b: string): string {
  return `${a.replace(/\/$/, '')}${b.startsWith('/') ? b : `/${b}`}`;
}

const toOpenApiPath = (p: string) => p.replace(/:(\w+)/g, '{$1}');

let stack: Stack;
let app: Express;
let closeDeps: () => Promise<void>;
const doc = buildOpenApiDocument();

beforeAll(async () => {
  stack = await startStack({ workers: true });
  const deps = await createApiDeps(stack.config, createLogger({ level: 'silent' }), { db: stack.db });
  closeDeps = deps.close;
  app = createApp(deps);
});
afterAll(async () => {
  await closeDeps?.();
  await stack?.close();
});

describe('OpenAPI document', () => {
  it('When anyone asks for /v1/openapi.json or /openapi.json without a token, then both serve the document built from the schemas', async () => {
    for (const path of ['/v1/openapi.json', '/openapi.json']) {
      const r = await stack.api('GET', path);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^application\/json; charset=utf-8/);
      expect(r.body).toEqual(JSON.parse(JSON.stringify(doc)));
    }
  });

  it('When the document is checked against the OpenAPI 3.1 structure, then it conforms', () => {
    const parsed = openApi31.safeParse(doc);
    expect(parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([]);
  });

  it('When every $ref is followed, then each one resolves', () => {
    const refs = [...new Set(collectRefs(doc))];
    expect(refs.length).toBeGreaterThan(10);
    expect(refs.filter((r) => resolvePointer(doc, r) === undefined)).toEqual([]);
  });

  it('When operations are listed, then each has a unique operationId, responses, a tag, and either bearer auth (or the oauth2 flows that obtain it) or an explicit public marker', () => {
    const ops = operationsOf(doc);
    const ids = ops.map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const schemes = Object.keys(doc.components?.securitySchemes ?? {});
    expect(schemes).toEqual(['bearerAuth', 'oauth2']);
    expect(doc.components?.securitySchemes?.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    const publicOps: string[] = [];
    for (const { method, path, op } of ops) {
      expect(Object.keys(op.responses).length, `${method} ${path}`).toBeGreaterThan(0);
      expect(op.tags?.length, `${method} ${path} has a tag`).toBeGreaterThan(0);
      expect(op.security, `${method} ${path} states its security`).toBeDefined();
      if (op.security!.length === 0) publicOps.push(`${method.toUpperCase()} ${path}`);
      else {
        expect(op.security).toEqual([{ bearerAuth: [] }, { oauth2: [] }]);
        expect(Object.keys(op.responses), `${method} ${path} documents 401`).toContain('401');
      }
    }
    expect(publicOps.sort()).toEqual(['GET /healthz', 'GET /openapi-3.0.json', 'GET /openapi.json', 'GET /readyz', 'POST /forgot-password', 'POST /invitations/accept', 'POST /invitations/preview', 'POST /login', 'POST /reset-password', 'POST /webhooks/paystack']);
  });

  it('When the introduction is read, then it lists the fixture NINs, the data envelope and bearer authentication', () => {
    const text = doc.info.description ?? '';
    for (const nin of ['12345678901', '12345678902', '99999999999']) expect(text).toContain(nin);
    expect(text).toContain('"data"');
    expect(text).toContain('Authorization: Bearer');
  });

  it('When the verification and top-up operations are read, then they document their bodies, envelope, errors and Idempotency-Key', () => {
    const paths = doc.paths as Record<string, Record<string, Op & { requestBody?: { content: Record<string, unknown> } }>>;
    for (const p of ['/verify-nin', '/verify-nin/phone', '/verify-nin/demography']) {
      const op = paths[p]!.post!;
      expect(Object.keys(op.requestBody!.content)).toEqual(['application/json']);
      expect((op.parameters as { name: string; in: string }[]).map((x) => `${x.in}:${x.name}`)).toContain('header:Idempotency-Key');
      for (const s of ['200', '400', '401', '402', '403', '404', '409', '415', '422', '429', '502', '504']) expect(Object.keys(op.responses), `${p} ${s}`).toContain(s);
    }
    for (const p of ['/login', '/topup/initialize', '/topup/verify']) {
      expect(Object.keys(paths[p]!.post!.requestBody!.content)).toEqual(['application/x-www-form-urlencoded']);
    }
    const verification = doc.components!.schemas!.VerificationResponse as { properties: Record<string, unknown>; required: string[] };
    expect(verification.required).toEqual(['data', 'verdict', 'verdict_reasons']);
    // Absolute, under PUBLIC_BASE_URL (here the sandbox's default): the probes outside the versioned base.
    expect(doc.servers).toEqual([expect.objectContaining({ url: `${SANDBOX_BASE_URL}/v1` })]);
    expect(paths['/healthz']!.get!.servers).toEqual([expect.objectContaining({ url: SANDBOX_BASE_URL })]);
  });
});

describe('Routes and document', () => {
  it('When the express router stack is walked, then every route the app mounts is documented, and every documented route is mounted', () => {
    const routes = mountedRoutes((app as unknown as { router: { stack: Layer[] } }).router.stack);
    const v1 = routes.filter((r) => r.split(' ')[1]!.startsWith('/v1/')).map((r) => r.replace(' /v1/', ' /'));
    expect(v1.length).toBeGreaterThan(10);
    // Everything under /v1 is also served unversioned.
    for (const r of v1) expect(routes).toContain(r);
    const unversionedOnly = routes.filter((r) => !r.split(' ')[1]!.startsWith('/v1/') && !v1.includes(r) && !NOT_API.some((re) => re.test(r.split(' ')[1]!)));
    const mounted = [...new Set([...v1, ...unversionedOnly])].map((r) => toOpenApiPath(r)).sort();
    const documented = operationsOf(doc)
      .map(({ method, path }) => `${method.toUpperCase()} ${path}`)
      .sort();
    expect(documented).toEqual(mounted);
  });

  it('When each documented operation is called anonymously with no body, then the status it answers is one the document lists', async () => {
    const unlisted: string[] = [];
    for (const { method, path, op } of operationsOf(doc)) {
      const base = op.servers?.[0]?.url === SANDBOX_BASE_URL ? '' : '/v1';
      const r = await stack.api(method.toUpperCase(), `${base}${path}`);
      if (!Object.keys(op.responses).includes(String(r.status))) unlisted.push(`${method.toUpperCase()} ${path} -> ${r.status}`);
      if (op.security?.length) expect(r.status, `${method} ${path} without a token`).toBe(401);
    }
    expect(unlisted).toEqual([]);
  });
});

describe('TypeScript client quickstart', () => {
  it('When the README example runs against the service, then it logs in, verifies a fixture NIN and starts a top-up', async () => {
    const org = await stack.createOrg({ units: 0 });
    const run = promisify(execFile);
    const { stdout } = await run(process.execPath, ['clients/typescript/examples/quickstart.ts'], {
      env: { ...process.env, BASE_URL: stack.url, IDV_USERNAME: org.admin.username, IDV_PASSWORD: org.admin.password },
      timeout: 25_000,
    });
    expect(stdout).toMatch(/verified: reference_id=REF-[A-Z0-9]{12}/);
    expect(stdout).toMatch(/top-up started: reference=TOP-\d+-[0-9a-f]{16}/);
    expect(stdout).toMatch(/pay at: http/);
  });
});
