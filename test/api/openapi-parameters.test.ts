import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../src/api-document/document.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// The document is never looser than the server: a path or query parameter the server judges by a
// rule shows that rule (pattern, type, bounds), because both read the same zod schema.

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
type Param = { name: string; in: string; schema: { type?: string; pattern?: string; minimum?: number; maximum?: number; default?: unknown } };

const doc = buildOpenApiDocument();
const paramsOf = (path: string, method: (typeof METHODS)[number]): Param[] =>
  ((doc.paths?.[path] as Record<string, { parameters?: Param[] }> | undefined)?.[method]?.parameters ?? []) as Param[];
const param = (path: string, name: string): Param => {
  const found = paramsOf(path, 'get').find((p) => p.name === name);
  if (!found) throw new Error(`${path} documents no parameter ${name}`);
  return found;
};
const matches = (p: Param, value: string) => new RegExp(p.schema.pattern!).test(value);

let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack({ workers: false });
  org = await stack.createOrg({ units: 0 });
});
afterAll(async () => {
  await stack?.close();
});

describe('the OpenAPI document states the rules of path and query parameters', () => {
  it('When the document is read, then every path parameter of every operation carries a pattern', () => {
    const loose: string[] = [];
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      for (const m of METHODS) {
        if (!(item as Record<string, unknown>)[m]) continue;
        for (const p of paramsOf(path, m)) if (p.in === 'path' && !p.schema.pattern) loose.push(`${m.toUpperCase()} ${path} {${p.name}}`);
      }
    }
    expect(loose).toEqual([]);
  });

  it("When a statement's month breaks the documented pattern, then the server answers 400, and a month the pattern takes is served", async () => {
    const month = param('/statements/{month}', 'month');
    const statement = (m: string) => stack.api('GET', `/v1/statements/${m}`, { token: org.admin.token, headers: { accept: 'application/json' } });
    for (const bad of ['2026-13', '2026-00', '2026-1', '1999-12', '0099-01', 'abcd-ef', '2026-11-01']) {
      expect(matches(month, bad), bad).toBe(false);
      const r = await statement(bad);
      expect({ bad, status: r.status, detail: r.body.detail }).toEqual({ bad, status: 400, detail: 'month must be yyyy-mm from 2000-01 (e.g. 2026-11)' });
    }
    expect(matches(month, '2026-01')).toBe(true);
    expect((await statement('2026-01')).status).toBe(200);
  });

  it('When a top-up reference breaks the documented pattern, then the server answers 400 on the top-up and its invoice; one the pattern takes is looked up (404)', async () => {
    for (const path of ['/topups/{reference}', '/topups/{reference}/invoice']) {
      const reference = param(path, 'reference');
      const ask = (ref: string) => stack.api('GET', `/v1${path.replace('{reference}', ref)}`, { token: org.admin.token });
      for (const bad of ['TOP-1-XYZ', 'TOP-1-0000000000000000a', 'top-1-0000000000000000', 'TOP--0000000000000000', 'TOP-1-ABCDEF0000000000']) {
        expect(matches(reference, bad), bad).toBe(false);
        const r = await ask(bad);
        expect({ bad, status: r.status, detail: r.body.detail }).toEqual({ bad, status: 400, detail: 'reference is not a top-up reference (TOP-<org>-<16 hex>)' });
      }
      const unknown = `TOP-${org.orgId}-0000000000000000`;
      expect(matches(reference, unknown)).toBe(true);
      expect((await ask(unknown)).status).toBe(404);
    }
  });

  it('When daily usage is asked for, then days is documented as the integer the server takes (1 to 366, default 30), a value outside is 400 and one not an integer 422', async () => {
    expect(param('/usage/daily', 'days').schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 366, default: 30 });
    const usage = (q: string) => stack.api('GET', `/v1/usage/daily${q}`, { token: org.admin.token });
    expect((await usage('')).body.data).toHaveLength(30);
    expect((await usage('?days=366')).body.data).toHaveLength(366);
    expect((await usage('?days=1')).body.data).toHaveLength(1);
    for (const bad of ['0', '367']) expect((await usage(`?days=${bad}`)).status, bad).toBe(400);
    // Not an integer at all: a wrong type, as for limit.
    for (const bad of ['abc', '1.5']) expect((await usage(`?days=${bad}`)).status, bad).toBe(422);
  });

  it('When a history list takes a time range, then from and to carry the pattern the server applies (a day or a date-time with a zone)', async () => {
    const from = param('/transactions', 'from');
    for (const good of ['2026-03-01', '2026-03-01T09:30:00Z', '2026-03-01T09:30:00.123+01:00']) {
      expect(matches(from, good), good).toBe(true);
      expect((await stack.api('GET', `/v1/transactions?from=${encodeURIComponent(good)}`, { token: org.admin.token })).status, good).toBe(200);
    }
    for (const bad of ['yesterday', '2026-03-01T09:30:00', '01-03-2026']) {
      expect(matches(from, bad), bad).toBe(false);
      expect((await stack.api('GET', `/v1/transactions?from=${encodeURIComponent(bad)}`, { token: org.admin.token })).status, bad).toBe(400);
    }
  });
});
