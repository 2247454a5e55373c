/**
 * `npm run docs`: draws the module and layer graphs of docs/architecture.md from the imports
 * (scripts/architecture-graph.ts), writes the variable tables of docs/configuration.md from the
 * configuration schemas (scripts/configuration-doc.ts), then renders the OpenAPI document the API serves (built from the app's registry, as
 * `npm run lint:openapi` does) to the static page `docs/api.html` with Redocly, offline: the Redoc
 * script is embedded (`--inlineBundle`), so the page loads nothing from a CDN. The page is generated, not
 * committed (.gitignore). Built outside a running service, its server is the sandbox's address
 * (http://localhost:8080/v1, as `npm start` serves); a deployment's own /docs and /v1/openapi.json name
 * its PUBLIC_BASE_URL.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from '../src/api-document/document.ts';
import { writeArchitectureGraphs } from './architecture-graph.ts';
import { writeConfigurationTables } from './configuration-doc.ts';

console.log((await writeArchitectureGraphs()) ? 'docs/architecture.md: graphs redrawn' : 'docs/architecture.md: graphs up to date');
console.log(writeConfigurationTables() ? 'docs/configuration.md: tables rewritten' : 'docs/configuration.md: tables up to date');

const dir = mkdtempSync(join(tmpdir(), 'openapi-docs-'));
try {
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(buildOpenApiDocument(), null, 2));
  const redocly = fileURLToPath(new URL('../node_modules/.bin/redocly', import.meta.url));
  const output = fileURLToPath(new URL('../docs/api.html', import.meta.url));
  const run = spawnSync(redocly, ['build-docs', file, '--inlineBundle', '-o', output], {
    stdio: 'inherit',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  process.exitCode = run.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
