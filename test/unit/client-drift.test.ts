import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { operations } from '../../clients/typescript/src/index.ts';
import { buildOpenApiDocument } from '../../src/openapi/document.ts';
import { CLIENT_TYPES_FILE, renderClientTypes, tsType } from '../../scripts/gen-client.ts';

describe('TypeScript client', () => {
  it('When the OpenAPI document is regenerated, then the committed client types are identical (else run `npm run gen:client`)', () => {
    const committed = readFileSync(CLIENT_TYPES_FILE, 'utf8');
    const fresh = renderClientTypes(buildOpenApiDocument());
    // toBe on two long strings prints a diff of the lines that drifted.
    expect(committed, 'clients/typescript/src/openapi.ts is stale: run `npm run gen:client`').toBe(fresh);
  });

  it('When the client lists its operations, then they are exactly the operations of the document', () => {
    const doc = buildOpenApiDocument();
    const documented = Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
      Object.entries(item as Record<string, { operationId?: string }>)
        .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
        .map(([method, op]) => `${op.operationId} ${method.toUpperCase()} ${path}`),
    );
    const client = Object.entries(operations).map(([id, o]) => `${id} ${o.method} ${o.path}`);
    expect(client.sort()).toEqual(documented.sort());
  });

  it('When a schema uses the OpenAPI 3.1 forms, then the generated type follows it', () => {
    expect(tsType({ type: ['string', 'null'] })).toBe('string | null');
    expect(tsType({ type: 'array', items: { anyOf: [{ type: 'integer' }, { const: 'x' }] } })).toBe('Array<number | "x">');
    expect(tsType({ $ref: '#/components/schemas/Error' })).toBe('Schemas["Error"]');
    expect(tsType({ type: 'object', properties: { 'a-b': { type: 'boolean' } }, required: [] })).toBe('{\n  "a-b"?: boolean;\n}');
    expect(tsType({ type: 'object', additionalProperties: { type: 'string' } })).toBe('{\n  [key: string]: string;\n}');
  });
});
