import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument, buildOpenApiDocument30 } from '../../src/api-document/document.ts';
import { LINT_EXCEPTION_COUNT_30, LINT_EXCEPTIONS_30, writeLintIgnore } from '../../src/openapi/lint-exceptions.ts';
import { startStack, type Stack } from '../setup/harness.ts';

/*
 * The document serves clients in every language: an OpenAPI 3.0 rendering for tools that cannot read
 * 3.1 (Go's kin-openapi under oapi-codegen, older generators), absolute servers, and no enum whose values
 * differ only by case (openapi-python-client stops on one). Here the 3.0 document is checked by a 3.0
 * validator (@apidevtools/swagger-parser) and Redocly; kin-openapi itself loads and validates it in
 * test/contract/kin-openapi-loads-3.0.test.ts. openapi-python-client needs PyPI, which this build cannot
 * reach, so it does not run here.
 */

const PUBLIC = 'https://api.idverify.example';
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const REDOCLY = fileURLToPath(new URL('../../node_modules/.bin/redocly', import.meta.url));

let stack: Stack;
let dir: string;
beforeAll(async () => {
  stack = await startStack({ workers: false, env: { PUBLIC_BASE_URL: `${PUBLIC}/` } });
  dir = mkdtempSync(join(tmpdir(), 'openapi-30-'));
});
afterAll(async () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  await stack?.close();
});

/** Every object node of a document, with where it sits. */
function nodes(node: unknown, where = '#', out: { where: string; node: Record<string, unknown> }[] = []) {
  if (Array.isArray(node)) node.forEach((n, i) => nodes(n, `${where}/${i}`, out));
  else if (node && typeof node === 'object') {
    out.push({ where, node: node as Record<string, unknown> });
    for (const [k, v] of Object.entries(node)) nodes(v, `${where}/${k}`, out);
  }
  return out;
}

const operations = (doc: { paths?: unknown }) =>
  Object.entries((doc.paths ?? {}) as Record<string, Record<string, { operationId?: string }>>)
    .flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((m) => `${item[m]!.operationId} ${m.toUpperCase()} ${path}`))
    .sort();

describe('the OpenAPI document for every client', () => {
  it('When /v1/openapi-3.0.json or /openapi-3.0.json is asked for without a token, then both serve the 3.0 rendering built from the same schemas', async () => {
    for (const path of ['/v1/openapi-3.0.json', '/openapi-3.0.json']) {
      const r = await stack.api('GET', path);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(r.body).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument30({ publicBaseUrl: PUBLIC }))));
      expect(r.body.openapi).toBe('3.0.3');
    }
  });

  it('When both documents are served, then their servers are absolute: PUBLIC_BASE_URL and /v1, the probes at PUBLIC_BASE_URL itself', async () => {
    for (const path of ['/v1/openapi.json', '/v1/openapi-3.0.json']) {
      const doc = (await stack.api('GET', path)).body;
      expect(doc.servers.map((s: { url: string }) => s.url), path).toEqual([`${PUBLIC}/v1`]);
      expect(doc.paths['/healthz'].get.servers.map((s: { url: string }) => s.url), path).toEqual([PUBLIC]);
      for (const { where, node } of nodes(doc)) if (Array.isArray(node.servers)) for (const s of node.servers as { url: string }[]) expect(s.url, `${path} ${where}`).toMatch(/^https:\/\//);
    }
  });

  it('When a 3.0 validator reads the served 3.0 document, then it is valid OpenAPI 3.0 with every $ref resolved', async () => {
    const served = (await stack.api('GET', '/v1/openapi-3.0.json')).body;
    // validate() checks the document against the OpenAPI 3.0 schema, then dereferences and checks its parameters and operationIds.
    const api = (await SwaggerParser.validate(structuredClone(served))) as { openapi: string };
    expect(api.openapi).toBe('3.0.3');
  });

  it('When the 3.0 document is read, then it has no construct of 3.1 (type lists, const, examples in schemas, SPDX licence) and the same operations as the 3.1 one', () => {
    const doc30 = buildOpenApiDocument30();
    const found = nodes(doc30)
      .filter(({ where, node }) => Array.isArray(node.type) || 'const' in node || ('examples' in node && /\/schema(s\/[^/]+)?(\/|$)/.test(where)) || node.type === 'null')
      .map(({ where }) => where);
    expect(found).toEqual([]);
    expect(doc30.info.license).not.toHaveProperty('identifier');
    // The 3.1 document has null types where the 3.0 one says nullable.
    expect(JSON.stringify(buildOpenApiDocument())).toContain('"null"');
    expect(JSON.stringify(doc30)).toContain('"nullable":true');
    expect(operations(doc30)).toEqual(operations(buildOpenApiDocument()));
  });

  it('When any enum of either document is read, then no two of its values differ only by case, and the gender of a demography or match request is m or f', () => {
    for (const doc of [buildOpenApiDocument(), buildOpenApiDocument30()]) {
      const clashes = nodes(doc)
        .filter(({ node }) => Array.isArray(node.enum))
        .filter(({ node }) => {
          const values = (node.enum as unknown[]).filter((v): v is string => typeof v === 'string');
          return new Set(values.map((v) => v.toLowerCase())).size !== values.length;
        })
        .map(({ where, node }) => `${where}: ${JSON.stringify(node.enum)}`);
      expect(clashes, doc.openapi).toEqual([]);
      const schemas = doc.components!.schemas as Record<string, { properties: Record<string, { enum?: string[]; description?: string }> }>;
      for (const name of ['VerifyDemographyRequest', 'VerifyMatchRequest']) {
        expect(schemas[name]!.properties.gender, `${doc.openapi} ${name}`).toMatchObject({ enum: ['m', 'f'], description: expect.stringContaining('any case') });
      }
    }
  });

  it('When the gender is sent in upper case, then the server still takes it (the document lists m and f and says any case)', async () => {
    const org = await stack.createOrg({ units: 0 });
    const body = { nin: '12345678901', reason: 'corporate', fname: 'adaeze', lname: 'OKONKWO', dob: '14-03-1991' };
    for (const gender of ['F', 'f', ' F ']) {
      const r = await stack.api('POST', '/v1/verify-nin/match', { token: org.member.token, json: { ...body, gender } });
      expect({ gender, status: r.status, match: r.body.data?.match?.gender }).toEqual({ gender, status: 200, match: true });
    }
    expect((await stack.api('POST', '/v1/verify-nin/match', { token: org.member.token, json: { ...body, gender: 'x' } })).status).toBe(400);
    expect((await stack.api('POST', '/v1/verify-nin/match', { token: org.member.token, json: { ...body, gender: 1 } })).status).toBe(422);
  });

  it("When Redocly's recommended rules lint the served 3.0 document, then 0 errors and 0 warnings beyond its documented exceptions", { timeout: 60_000 }, async () => {
    const served = await stack.api('GET', '/v1/openapi-3.0.json');
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(buildOpenApiDocument({ publicBaseUrl: PUBLIC })));
    writeFileSync(join(dir, 'openapi-3.0.json'), served.text);
    writeLintIgnore(dir, 'openapi.json', { 'openapi-3.0.json': LINT_EXCEPTIONS_30 });
    const { stdout } = await promisify(execFile)(REDOCLY, ['lint', '--extends', 'recommended-strict', '--format', 'json', 'openapi-3.0.json'], {
      cwd: dir,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number; ignored: number }; problems: { ruleId: string; message: string; ignored?: boolean }[] };
    expect(report.problems.filter((p) => !p.ignored).map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0, ignored: LINT_EXCEPTION_COUNT_30 });
  });
});
