import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LINT_EXCEPTION_COUNT, writeLintIgnore } from '../../src/openapi/lint-exceptions.ts';
import { startStack, type Stack } from '../setup/harness.ts';

// The document the API serves, as Swagger UI and client generators read it: an OAuth 2.0 scheme they
// can sign in with, and nothing Redocly's recommended rules object to.

const REDOCLY = fileURLToPath(new URL('../../node_modules/.bin/redocly', import.meta.url));

let stack: Stack;
let dir: string;
beforeAll(async () => {
  // As a deployment serves it, under its PUBLIC_BASE_URL: the servers are absolute, and Redocly refuses
  // a published server at localhost (the sandbox's default address).
  stack = await startStack({ workers: false, env: { PUBLIC_BASE_URL: 'https://api.idverify.example' } });
  dir = mkdtempSync(join(tmpdir(), 'openapi-served-'));
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await stack?.close();
});

it('When the served document is read, then it declares oauth2 with the password and client credentials flows at /v1/login beside bearer, on every authenticated operation', async () => {
  const doc = (await stack.api('GET', '/v1/openapi.json')).body;
  expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  expect(doc.components.securitySchemes.oauth2).toMatchObject({
    type: 'oauth2',
    flows: { password: { tokenUrl: '/v1/login', scopes: {} }, clientCredentials: { tokenUrl: '/v1/login', scopes: {} } },
  });
  const me = doc.paths['/me'].get;
  expect(me.security).toEqual([{ bearerAuth: [] }, { oauth2: [] }]);
});

it("When Redocly's recommended rules lint the served document, then 0 errors and 0 warnings", { timeout: 60_000 }, async () => {
  const served = await stack.api('GET', '/v1/openapi.json');
  expect(served.status).toBe(200);
  writeFileSync(join(dir, 'openapi.json'), served.text);
  // The documented exceptions (a retired operation with no 2xx answer), and exactly those.
  writeLintIgnore(dir, 'openapi.json');
  const { stdout } = await promisify(execFile)(REDOCLY, ['lint', '--extends', 'recommended', '--format', 'json', 'openapi.json'], {
    cwd: dir,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number; ignored: number }; problems: { ruleId: string; message: string; ignored?: boolean }[] };
  expect(report.problems.filter((p) => !p.ignored).map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
  expect(report.totals).toMatchObject({ errors: 0, warnings: 0, ignored: LINT_EXCEPTION_COUNT });
});
