import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../setup/harness.ts';
import { run, toolchain } from '../clients/helpers.ts';

/*
 * Go integrators generate their client with oapi-codegen, which reads the document through kin-openapi.
 * kin-openapi reads OpenAPI 3.0 only, so the service serves a 3.0 rendering at /v1/openapi-3.0.json; this
 * file loads that served document with kin-openapi itself (kin-openapi/main.go: NewLoader().LoadFromFile,
 * then doc.Validate) and shows why the rendering exists: the 3.1 document does not load.
 *
 * kin-openapi is Debian's golang-github-getkin-kin-openapi-dev (Debian's build, its Go dependencies as
 * Debian packages under /usr/share/gocode), compiled in GOPATH mode with GOPROXY=off: nothing downloads.
 * Without Go or the package the file skips, except when CI is set (.ci/run installs both), where it fails.
 */

const PROGRAM = fileURLToPath(new URL('./kin-openapi', import.meta.url));
const GOPATH = '/usr/share/gocode';
const PACKAGE = 'golang-github-getkin-kin-openapi-dev';
const GO_ENV = { GO111MODULE: 'off', GOPATH, GOPROXY: 'off', GOFLAGS: '', GOTOOLCHAIN: 'local' };

const go = toolchain('go', ['version']);
const kin = existsSync(join(GOPATH, 'src/github.com/getkin/kin-openapi/openapi3'));
if (go.present && !kin && process.env.CI) throw new Error(`CI is set but kin-openapi is not under ${GOPATH}: apt-get install ${PACKAGE} (see .ci/run)`);
if (!go.present || !kin) console.warn(`kin-openapi contract skipped: ${!go.present ? 'no `go`' : `no ${PACKAGE} under ${GOPATH}`}`);

let stack: Stack;
let dir = '';
let loader = '';

/** Writes a served document to a file and loads it with kin-openapi. */
async function load(path: string) {
  const r = await stack.api('GET', path);
  expect(r.status, path).toBe(200);
  const file = join(dir, `${path.replace(/\W+/g, '_')}.json`);
  writeFileSync(file, JSON.stringify(r.body));
  return { doc: r.body as { openapi: string; paths: Record<string, unknown> }, ...run(loader, [file], dir) };
}

describe.skipIf(!go.present || !kin)('the OpenAPI documents as kin-openapi (oapi-codegen) loads them', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kin-openapi-'));
    loader = join(dir, 'kin-openapi-load');
    const build = run('go', ['build', '-o', loader, '.'], PROGRAM, GO_ENV);
    expect(build.status, build.output).toBe(0);
    stack = await startStack({ workers: false });
  }, 300_000);
  afterAll(async () => {
    await stack?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('When kin-openapi loads and validates the served /v1/openapi-3.0.json, then it succeeds and reads every path', async () => {
    const r = await load('/v1/openapi-3.0.json');
    expect(r.status, r.output).toBe(0);
    expect(r.output.trim()).toBe(`ok: OpenAPI 3.0.3, ${Object.keys(r.doc.paths).length} paths`);
  });

  it('When kin-openapi loads the served 3.1 /v1/openapi.json, then it stops at a `type` list, which 3.0 does not have', async () => {
    const r = await load('/v1/openapi.json');
    expect(r.doc.openapi).toMatch(/^3\.1\./);
    expect(r.status, r.output).toBe(1);
    expect(r.output).toMatch(/unmarshal property "type".*cannot unmarshal array/);
  });
});
