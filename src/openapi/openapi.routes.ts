import { Router } from 'express';
import { buildOpenApiDocument } from './document.ts';

/** GET /openapi.json, without authentication: integrators read it before they have an account. */
export function openApiRoutes(): Router {
  // Built on first request and kept: the schemas cannot change while the process runs.
  let body: string | undefined;
  const r = Router();
  r.get('/openapi.json', (_req, res) => {
    body ??= JSON.stringify(buildOpenApiDocument());
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.type('application/json').send(body);
  });
  return r;
}
