import { Router } from 'express';
import { buildOpenApiDocument, buildOpenApiDocument30, type DocumentOptions } from './document.ts';

/**
 * GET /openapi.json (OpenAPI 3.1) and GET /openapi-3.0.json (the same API in OpenAPI 3.0, for tools
 * that cannot read 3.1), without authentication: integrators read them before they have an account.
 * Their servers are absolute, under PUBLIC_BASE_URL.
 */
export function openApiRoutes(opts: DocumentOptions): Router {
  // Built on first request and kept: the schemas cannot change while the process runs.
  const documents: Record<string, { build: () => unknown; body?: string }> = {
    '/openapi.json': { build: () => buildOpenApiDocument(opts) },
    '/openapi-3.0.json': { build: () => buildOpenApiDocument30(opts) },
  };
  const r = Router();
  for (const [path, doc] of Object.entries(documents)) {
    r.get(path, (_req, res) => {
      doc.body ??= JSON.stringify(doc.build());
      res.setHeader('Cache-Control', 'public, max-age=300');
      res.type('application/json').send(doc.body);
    });
  }
  return r;
}
