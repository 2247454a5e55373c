import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Router } from 'express';

// The service's one icon (16 and 32 px PNGs in an ICO, 377 bytes), read once at start. Every page a
// person opens (portal, link page, /docs, the platform page) names it, and a browser asks for
// /favicon.ico on its own anyway: without it each page load logged a 404.
const ICON = readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'favicon.ico'));

/** GET /favicon.ico, outside the versioned API (no token, no rate limit: a static file of the process). */
export function faviconRoutes(): Router {
  const r = Router();
  r.get('/favicon.ico', (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.type('image/x-icon').send(ICON);
  });
  return r;
}
