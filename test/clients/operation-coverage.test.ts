import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../src/api-document/document.ts';

// The Python, PHP, Go and Java clients are written by hand (no generator for them runs here): each
// method carries a comment `@operation METHOD /path` naming the operation it calls, exactly as the
// document writes the path. This file holds them to the document: every operation has a method, and
// no method names an operation the document lacks. A marker only counts when the call beneath it agrees:
// the code from the marker to the method's end (the first blank line) must hold the marker's path as
// string literals (a `{param}` may be written literally or filled by code between the literals) and
// the HTTP method as a literal, or call a helper whose method is fixed (`verify`: POST, `bytes`: GET,
// the sign-in helper: POST /login). A marker copied above the wrong call is thus reported.

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

type Marker = { operation: string; where: string; agrees: boolean };

// A string literal (kept) or a comment (dropped): comments must not lend the check their words.
const TOKEN = /("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|\/\*[\s\S]*?\*\/|\/\/[^\n]*|#[^\n]*/g;
const METHOD_LITERAL = /^(GET|POST|PUT|PATCH|DELETE)$/;
/** Helpers that fix the HTTP method (and, for signing in, the path) so the call names neither. */
const IMPLIED: { call: RegExp; method: string; path?: string }[] = [
  { call: /\b_?verify\(/, method: 'POST' },
  { call: /\b_?bytes\(/, method: 'GET' },
  { call: /\b_?sign_?in\(/i, method: 'POST', path: '/login' },
];
const withoutParams = (path: string) => path.replace(/\{[^}]*\}/g, '');

/** The code a marker stands for: from the marker (itself left out) to the first blank line or next marker. */
function callBelow(lines: string[], i: number, marker: string): string {
  const window = [lines[i]!.replace(marker, '')];
  for (let j = i + 1; j < lines.length && lines[j]!.trim() !== '' && !lines[j]!.includes('@operation'); j++) window.push(lines[j]!);
  return window.join('\n');
}

/** Whether the call's literals name the marker's method and path. */
function callAgrees(method: string, path: string, code: string): boolean {
  const literals = (text: string) => [...text.matchAll(TOKEN)].filter((t) => t[1] !== undefined).map((t) => t[1]!.slice(1, -1));
  const methods = literals(code).filter((l) => METHOD_LITERAL.test(l));
  // One path per line: the literals starting with "/" on a line, joined (PHP and Java build `{id}` by concatenation).
  const paths = code
    .split('\n')
    .map((line) => withoutParams(literals(line).filter((l) => l.startsWith('/')).join('')))
    .filter((p) => p !== '');
  const implied = IMPLIED.filter((h) => h.call.test(code.replace(TOKEN, (t, lit) => (lit ? '""' : ''))));
  const methodOk = methods.length > 0 ? methods.every((m) => m === method) : implied.some((h) => h.method === method);
  const pathOk = paths.length > 0 ? paths.every((p) => p === withoutParams(path)) : implied.some((h) => h.path === path);
  return methodOk && pathOk;
}

function markersIn(files: { name: string; text: string }[]): Marker[] {
  return files.flatMap(({ name, text }) => {
    const lines = text.split('\n');
    return lines.flatMap((line, i) =>
      [...line.matchAll(MARKER)].map((m) => ({
        operation: `${m[1]} ${m[2]}`,
        where: `${name}:${i + 1}`,
        agrees: callAgrees(m[1]!, m[2]!, callBelow(lines, i, m[0])),
      })),
    );
  });
}

/**
 * What the check reports: operations of the document with no marker whose call agrees, markers naming no
 * operation, and markers whose call names another method or path.
 */
function coverage(documented: string[], markers: Marker[]): { missing: string[]; unknown: string[]; mismatched: string[] } {
  const marked = new Set(markers.filter((m) => m.agrees).map((m) => m.operation));
  const known = new Set(documented);
  return {
    missing: documented.filter((op) => !marked.has(op)).sort(),
    unknown: markers.filter((m) => !known.has(m.operation)).map((m) => `${m.operation} (${m.where})`),
    mismatched: markers.filter((m) => !m.agrees).map((m) => `${m.operation} (${m.where})`),
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
      expect(coverage(documented, markersIn(files))).toEqual({ missing: [], unknown: [], mismatched: [] });
    });
  }

  it('When a method and its marker are removed from a client, then the check names the operation left without a method', () => {
    const files = clientFiles('python');
    const target = files.find((f) => f.text.includes('# @operation GET /verify-nin/batches/{id}\n'))!;
    expect(target).toBeDefined();
    const without = files.map((f) => (f === target ? { ...f, text: f.text.replace('# @operation GET /verify-nin/batches/{id}\n', '') } : f));
    expect(coverage(documented, markersIn(without))).toEqual({ missing: ['GET /verify-nin/batches/{id}'], unknown: [], mismatched: [] });
  });

  it('When a marker names an operation the document lacks, then the check names it with its place', () => {
    const files = [{ name: 'clients/x/a.py', text: 'x\n# @operation GET /no-such-path\n' }];
    expect(coverage(documented, markersIn(files)).unknown).toEqual(['GET /no-such-path (clients/x/a.py:2)']);
  });

  it("When a marker's path disagrees with the call beneath it, then the check names the marker and the operation counts as missing", () => {
    const files = clientFiles('python');
    const target = files.find((f) => f.text.includes('return self._json("GET", "/verify-nin/batches/{id}", '))!;
    expect(target).toBeDefined();
    const wrong = files.map((f) =>
      f === target ? { ...f, text: f.text.replace('"GET", "/verify-nin/batches/{id}", ', '"GET", "/verify-nin/batches/{id}/results", ') } : f,
    );
    const report = coverage(documented, markersIn(wrong));
    expect(report.missing).toEqual(['GET /verify-nin/batches/{id}']);
    expect(report.mismatched).toEqual([expect.stringMatching(/^GET \/verify-nin\/batches\/\{id\} \(clients\/python\/idverify\/client\.py:\d+\)$/)]);
  });

  it("When a marker's method disagrees with the literal in the call, or the path is built by concatenation and differs, then the marker does not count", () => {
    const php = (call: string) => [{ name: 'clients/x/A.php', text: `    /** @operation GET /verify-nin/batches/{id}/results */\n    public function f($id)\n    {\n        ${call}\n    }\n` }];
    const agreeing = "return $this->call('getBatchResults', 'GET', '/verify-nin/batches/' . self::seg($id) . '/results');";
    expect(markersIn(php(agreeing)).map((m) => m.agrees)).toEqual([true]);
    expect(markersIn(php(agreeing.replace("'GET'", "'POST'"))).map((m) => m.agrees)).toEqual([false]);
    expect(markersIn(php(agreeing.replace("'/results'", "'/cancel'"))).map((m) => m.agrees)).toEqual([false]);
    expect(markersIn(php("return $this->call('getBatch', 'GET', '/verify-nin/batches/' . self::seg($id));")).map((m) => m.agrees)).toEqual([false]);
  });
});
