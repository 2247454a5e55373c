/**
 * `npm run lint:openapi` (part of `npm test`): Redocly's recommended rules over the OpenAPI document
 * the API serves, every rule an error (the `recommended-strict` set), so a warning fails too; the only
 * exceptions, with their reasons, are in src/openapi/lint-exceptions.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from '../src/openapi/document.ts';
import { writeLintIgnore } from '../src/openapi/lint-exceptions.ts';

const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
try {
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(buildOpenApiDocument(), null, 2));
  // Redocly reads its ignore file from the directory it runs in, keyed by the linted file's name.
  writeLintIgnore(dir, 'openapi.json');
  const redocly = fileURLToPath(new URL('../node_modules/.bin/redocly', import.meta.url));
  const run = spawnSync(redocly, ['lint', '--extends', 'recommended-strict', '--format', 'stylish', 'openapi.json'], {
    cwd: dir,
    stdio: 'inherit',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  process.exitCode = run.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
