import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Router, type Response } from 'express';

const here = dirname(fileURLToPath(import.meta.url));
// From the npm package, never a CDN: the page must work offline and under a same-origin CSP.
const swaggerUiDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/**
 * Exactly the files the page needs; the package's own index and petstore initializer are not served.
 * A Map, not an object literal: a name like `__proto__` or `constructor` must find nothing.
 */
const FILES = new Map<string, string>([
  ['index.html', join(here, 'index.html')],
  ['docs.js', join(here, 'docs.js')],
  ['swagger-ui.css', join(swaggerUiDir, 'swagger-ui.css')],
  ['swagger-ui-bundle.js', join(swaggerUiDir, 'swagger-ui-bundle.js')],
]);

function send(res: Response, file: string): void {
  res.sendFile(file, { maxAge: file.endsWith('.html') ? 0 : '1h', dotfiles: 'deny' });
}

/** GET /docs: Swagger UI rendering /v1/openapi.json. */
export function docsRoutes(): Router {
  const r = Router({ strict: true });
  // The page links its assets relatively, so it must be addressed as a folder.
  r.get('/docs', (_req, res) => res.redirect(301, 'docs/'));
  r.get('/docs/', (_req, res) => send(res, FILES.get('index.html')!));
  r.get('/docs/:file', (req, res, next) => {
    const file = FILES.get(req.params.file);
    if (!file || req.params.file === 'index.html') return next();
    send(res, file);
  });
  return r;
}
