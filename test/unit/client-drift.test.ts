import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { operations } from '../../clients/typescript/src/index.ts';
import { buildOpenApiDocument } from '../../src/api-document/document.ts';
import { renderClientFiles } from '../../scripts/gen-client.ts';

describe('TypeScript client', () => {
  it('When the OpenAPI document is regenerated, then the committed client files are identical (else run `npm run gen:client`)', async () => {
    const files = await renderClientFiles(buildOpenApiDocument());
    expect(Object.keys(files).length).toBeGreaterThan(0);
    for (const [file, fresh] of Object.entries(files)) {
      const name = relative(process.cwd(), file);
      // toBe on two long strings prints a diff of the lines that drifted.
      expect(readFileSync(file, 'utf8'), `${name} is stale: run \`npm run gen:client\``).toBe(fresh);
    }
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
});
