/**
 * Generates clients/typescript/src/openapi.ts, the types and operation table of the TypeScript
 * client, from the OpenAPI document the API serves. `npm run gen:client` writes it;
 * test/unit/client-drift.test.ts regenerates it in memory and fails when the committed file differs.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument, type OpenApiDocument } from '../src/openapi/document.ts';

export const CLIENT_TYPES_FILE = fileURLToPath(new URL('../clients/typescript/src/openapi.ts', import.meta.url));

type Json = Record<string, unknown>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

const key = (k: string) => (IDENT.test(k) ? k : JSON.stringify(k));

function refName(ref: string, kind: 'schemas' | 'responses' | 'parameters'): string {
  const prefix = `#/components/${kind}/`;
  if (!ref.startsWith(prefix)) throw new Error(`unsupported $ref ${ref}`);
  return ref.slice(prefix.length);
}

/** JSON Schema (OpenAPI 3.1 dialect, as zod-to-openapi emits it) to a TypeScript type. */
export function tsType(schema: unknown, indent = ''): string {
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  const s = schema as Json;
  if (typeof s.$ref === 'string') return `Schemas[${JSON.stringify(refName(s.$ref, 'schemas'))}]`;
  if ('const' in s) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (Array.isArray(s.allOf)) return s.allOf.map((x) => wrap(tsType(x, indent))).join(' & ');
  const alternatives = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(alternatives)) return alternatives.map((x) => wrap(tsType(x, indent))).join(' | ');
  if (Array.isArray(s.type)) return s.type.map((t) => tsType({ ...s, type: t }, indent)).join(' | ');
  switch (s.type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `Array<${tsType(s.items, indent)}>`;
    case 'object':
      return objectType(s, indent);
    default:
      return s.properties ? objectType(s, indent) : 'unknown';
  }
}

function wrap(t: string): string {
  return /[|&]/.test(t) && !t.startsWith('{') ? `(${t})` : t;
}

function objectType(s: Json, indent: string): string {
  const props = (s.properties ?? {}) as Record<string, unknown>;
  const required = new Set((s.required ?? []) as string[]);
  const inner = `${indent}  `;
  const lines = Object.entries(props).map(([name, p]) => {
    const doc = (p as Json).description;
    const comment = typeof doc === 'string' ? `${inner}/** ${doc.replace(/\*\//g, '*\\/').replace(/\s+/g, ' ')} */\n` : '';
    return `${comment}${inner}${key(name)}${required.has(name) ? '' : '?'}: ${tsType(p, inner)};`;
  });
  const extra = s.additionalProperties;
  if (extra !== undefined && extra !== false) lines.push(`${inner}[key: string]: ${extra === true ? 'unknown' : tsType(extra, inner)};`);
  if (lines.length === 0) return extra === false ? 'Record<string, never>' : 'Record<string, unknown>';
  return `{\n${lines.join('\n')}\n${indent}}`;
}

type Operation = {
  operationId: string;
  method: string;
  path: string;
  base: string;
  auth: boolean;
  contentType: string | null;
  body: string;
  headers: string;
  responses: [string, string][];
};

function operationsOf(doc: OpenApiDocument): Operation[] {
  const d = doc as unknown as Json;
  const components = (d.components ?? {}) as Json;
  const responsesC = (components.responses ?? {}) as Record<string, Json>;
  const defaultBase = (((d.servers as Json[] | undefined) ?? [])[0]?.url as string | undefined) ?? '';
  const globalSecurity = (d.security as unknown[] | undefined) ?? [];
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries((d.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      const servers = (op.servers ?? item.servers) as Json[] | undefined;
      const base = ((servers?.[0]?.url as string | undefined) ?? defaultBase).replace(/\/$/, '');
      const security = (op.security as unknown[] | undefined) ?? globalSecurity;
      const content = ((op.requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>;
      const [contentType, media] = Object.entries(content)[0] ?? [null, undefined];
      const params = ((op.parameters ?? []) as Json[]).filter((p) => p.in === 'header');
      const headers = params.length
        ? `{\n${params.map((p) => `      ${key(p.name as string)}${p.required ? '' : '?'}: ${tsType(p.schema, '      ')};`).join('\n')}\n    }`
        : 'Record<string, never>';
      const responses = Object.entries((op.responses ?? {}) as Record<string, Json>).map(([status, r]) => {
        const resolved = typeof r.$ref === 'string' ? responsesC[refName(r.$ref, 'responses')]! : r;
        const json = ((resolved.content ?? {}) as Record<string, Json>)['application/json'];
        return [status, json ? tsType(json.schema, '      ') : 'undefined'] as [string, string];
      });
      ops.push({
        operationId: op.operationId as string,
        method: method.toUpperCase(),
        path,
        base,
        auth: security.length > 0,
        contentType,
        body: media ? tsType(media.schema, '    ') : 'undefined',
        headers,
        responses,
      });
    }
  }
  return ops;
}

/** The whole generated file; pure, so the drift test compares it with the committed one. */
export function renderClientTypes(doc: OpenApiDocument): string {
  const schemas = ((doc.components?.schemas ?? {}) as Record<string, unknown>);
  const ops = operationsOf(doc);
  const out: string[] = [
    '// Generated by `npm run gen:client` (scripts/gen-client.ts) from the OpenAPI document the API serves',
    `// (${doc.info.title} ${doc.info.version}). Do not edit: test/unit/client-drift.test.ts fails when this file`,
    '// differs from what the document generates.',
    '',
    '/** components.schemas */',
    'export type Schemas = {',
    ...Object.entries(schemas).map(([name, s]) => `  ${key(name)}: ${tsType(s, '  ')};`),
    '};',
    '',
    '/** Every operation: its request body, header parameters and JSON response bodies by status. */',
    'export type Operations = {',
  ];
  for (const o of ops) {
    out.push(
      `  ${key(o.operationId)}: {`,
      `    body: ${o.body};`,
      `    headers: ${o.headers};`,
      '    responses: {',
      ...o.responses.map(([status, t]) => `      ${key(status)}: ${t};`),
      '    };',
      '  };',
    );
  }
  out.push('};', '', '/** Where each operation lives and how its body is encoded. */', 'export const operations = {');
  for (const o of ops) {
    out.push(
      `  ${key(o.operationId)}: { method: ${JSON.stringify(o.method)}, base: ${JSON.stringify(o.base)}, path: ${JSON.stringify(o.path)}, auth: ${o.auth}, contentType: ${JSON.stringify(o.contentType)} },`,
    );
  }
  out.push('} as const;', '', 'export type OperationId = keyof typeof operations;', '');
  return out.join('\n');
}

if (import.meta.main) {
  writeFileSync(CLIENT_TYPES_FILE, renderClientTypes(buildOpenApiDocument()));
  process.stdout.write(`wrote ${CLIENT_TYPES_FILE}\n`);
}
