import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../src/openapi/document.ts';

// The Python, PHP, Go and Java clients are written by hand (no generator for them runs here): each
// method carries a comment `@operation METHOD /path` naming the operation it calls, exactly as the
// document writes the path. This file holds them to the document: every operation has a method, and
// no method names an operation the document lacks.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LANGUAGES = { python: '.py', php: '.php', go: '.go', java: '.java' } as const;
const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const MARKER = /@operation\s+([A-Z]+)\s+(\S+)/g;

function documentedOperations(): string[] {
  const doc = buildOpenApiDocument();
  return Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
    Object.keys(item as object)
      .filter((m) => HTTP_METHODS.includes(m))
      .map((m) => `${m.toUpperCase()} ${path}`),
  );
}

/** The client's own source files: not its tests or examples (a test naming an operation is no method). */
function sourceFiles(dir: string, ext: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const rel = relative(dir, p);
      if (statSync(p).isDirectory()) {
        if (/^(tests?|examples|vendor|build|target|node_modules)$/.test(name) || rel === join('src', 'test')) continue;
        walk(p);
      } else if (name.endsWith(ext) && !name.endsWith(`_test${ext}`)) out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}

type Marker = { operation: string; where: string };

function markersIn(files: { name: string; text: string }[]): Marker[] {
  return files.flatMap(({ name, text }) =>
    text.split('\n').flatMap((line, i) => [...line.matchAll(MARKER)].map((m) => ({ operation: `${m[1]} ${m[2]}`, where: `${name}:${i + 1}` }))),
  );
}

/** What the check reports: operations of the document with no marker, markers naming no operation. */
function coverage(documented: string[], markers: Marker[]): { missing: string[]; unknown: string[] } {
  const marked = new Set(markers.map((m) => m.operation));
  const known = new Set(documented);
  return {
    missing: documented.filter((op) => !marked.has(op)).sort(),
    unknown: markers.filter((m) => !known.has(m.operation)).map((m) => `${m.operation} (${m.where})`),
  };
}

function clientFiles(language: keyof typeof LANGUAGES): { name: string; text: string }[] {
  const dir = join(ROOT, 'clients', language);
  if (!existsSync(dir)) return [];
  return sourceFiles(dir, LANGUAGES[language]).map((p) => ({ name: relative(ROOT, p), text: readFileSync(p, 'utf8') }));
}

const documented = documentedOperations();

describe('hand-written clients cover the OpenAPI document', () => {
  it('When the document is read, then it has operations to cover (the check is not vacuous)', () => {
    expect(documented.length).toBeGreaterThan(50);
    expect(documented).toContain('POST /verify-nin');
    expect(documented).toContain('GET /verify-nin/batches/{id}');
  });

  for (const language of Object.keys(LANGUAGES) as (keyof typeof LANGUAGES)[]) {
    it(`When the ${language} client's source is read, then every operation of the document has a method and every method names a documented operation`, () => {
      const files = clientFiles(language);
      expect(files.length, `no ${LANGUAGES[language]} source under clients/${language}`).toBeGreaterThan(0);
      expect(coverage(documented, markersIn(files))).toEqual({ missing: [], unknown: [] });
    });
  }

  it('When a method and its marker are removed from a client, then the check names the operation left without a method', () => {
    const files = clientFiles('python');
    const target = files.find((f) => f.text.includes('# @operation GET /verify-nin/batches/{id}\n'))!;
    expect(target).toBeDefined();
    const without = files.map((f) => (f === target ? { ...f, text: f.text.replace('# @operation GET /verify-nin/batches/{id}\n', '') } : f));
    expect(coverage(documented, markersIn(without))).toEqual({ missing: ['GET /verify-nin/batches/{id}'], unknown: [] });
  });

  it('When a marker names an operation the document lacks, then the check names it with its place', () => {
    const files = [{ name: 'clients/x/a.py', text: 'x\n# @operation GET /no-such-path\n' }];
    expect(coverage(documented, markersIn(files)).unknown).toEqual(['GET /no-such-path (clients/x/a.py:2)']);
  });
});
