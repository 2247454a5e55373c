/**
 * `npm run lint:openapi` (part of `npm test`): Redocly's recommended rules over both documents the API
 * serves, the OpenAPI 3.1 one (/v1/openapi.json) and its 3.0 rendering (/v1/openapi-3.0.json), every
 * rule an error (the `recommended-strict` set), so a warning fails too; the only exceptions, with their
 * reasons, are in src/openapi/lint-exceptions.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument, buildOpenApiDocument30 } from '../src/api-document/document.ts';
import { LINT_EXCEPTIONS_30, writeLintIgnore } from '../src/openapi/lint-exceptions.ts';

// The documents as a deployment serves them, under its PUBLIC_BASE_URL: the sandbox's default
// (localhost) would break the rule that a published server is not a local or example address.
const opts = { publicBaseUrl: 'https://idverify.example' };

const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
try {
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(buildOpenApiDocument(opts), null, 2));
  writeFileSync(join(dir, 'openapi-3.0.json'), JSON.stringify(buildOpenApiDocument30(opts), null, 2));
  // Redocly reads its ignore file from the directory it runs in, keyed by the linted file's name.
  writeLintIgnore(dir, 'openapi.json', { 'openapi-3.0.json': LINT_EXCEPTIONS_30 });
  const redocly = fileURLToPath(new URL('../node_modules/.bin/redocly', import.meta.url));
  const run = spawnSync(redocly, ['lint', '--extends', 'recommended-strict', '--format', 'stylish', 'openapi.json', 'openapi-3.0.json'], {
    cwd: dir,
    stdio: 'inherit',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  process.exitCode = run.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
