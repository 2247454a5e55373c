import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import express, { Router, type RequestHandler } from 'express';
import type { AppContext } from '../../context.ts';
import { notFound } from '../../lib/http.ts';
import { portalBridge, sessionKeys, sessionStatus } from './session.ts';

/** Where `npm ci` (the `prepare` script) or `npm run build:portal` writes the built portal. */
export const PORTAL_DIST = fileURLToPath(new URL('../../../portal/dist', import.meta.url));

// No inline script or style, no eval; images may be data: URLs (the person's photo, the MFA QR code).
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const strictCsp: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', CSP);
  next();
};

/**
 * The portal at /portal: its built assets, the page for every deep link (the router in the page
 * decides what to show), its session status, and the API itself under /portal/api through the
 * session bridge (with or without `/v1`).
 */
export function portalRoutes(ctx: AppContext, api: Router): Router {
  const r = Router();
  const keys = sessionKeys(ctx.config.encryptionKeys);
  r.use('/portal', strictCsp);
  r.get('/portal/session', sessionStatus(keys));
  // `/portal/api/v1/<path>` and `/portal/api/<path>` are the same API path (callers write either, as
  // they may write `/v1/<path>` or `/<path>` to the API), through the same bridge. A path the API
  // does not know is its JSON 404 here, never the portal's page: the API's callers read JSON.
  const bridge = portalBridge(keys, ctx.config.JWT_TTL_SECONDS);
  r.use('/portal/api/v1', bridge, api, notFound);
  r.use('/portal/api', bridge, api, notFound);
  // Hashed file names: an asset never changes under its name.
  r.use('/portal/assets', express.static(`${PORTAL_DIST}/assets`, { immutable: true, maxAge: '365d', fallthrough: false, index: false }));
  const indexFile = `${PORTAL_DIST}/index.html`;
  let page: string | null = null;
  r.get(['/portal', '/portal/*rest'], (_req, res) => {
    if (page === null && existsSync(indexFile)) page = readFileSync(indexFile, 'utf8');
    res.setHeader('Cache-Control', 'no-cache');
    if (page === null) {
      res.status(503).json({ detail: 'The portal is not built: run npm run build:portal (npm ci does it)' });
      return;
    }
    res.type('html').send(page);
  });
  return r;
}
