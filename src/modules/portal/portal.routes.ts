import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import express, { Router, type RequestHandler } from 'express';
import type { AppContext } from '../../context.ts';
import { notFound } from '../../lib/http.ts';
import { pickEncoding, precompressedAssets, varyOnEncoding } from './precompressed.ts';
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
  r.get('/portal/session', sessionStatus(keys, ctx.clock));
  // `/portal/api/v1/<path>` and `/portal/api/<path>` are the same API path (callers write either, as
  // they may write `/v1/<path>` or `/<path>` to the API), through the same bridge. A path the API
  // does not know is its JSON 404 here, never the portal's page: the API's callers read JSON.
  const bridge = portalBridge(keys, ctx.config.JWT_TTL_SECONDS);
  r.use('/portal/api/v1', bridge, api, notFound);
  r.use('/portal/api', bridge, api, notFound);
  // Hashed file names: an asset never changes under its name. Compressed at build time, sent as built.
  const assets = `${PORTAL_DIST}/assets`;
  r.use('/portal/assets', precompressedAssets(assets), express.static(assets, { immutable: true, maxAge: '365d', fallthrough: false, index: false }));
  const indexFile = `${PORTAL_DIST}/index.html`;
  // The page as built, and its compressed forms when the build wrote them; read once.
  const page = new Map<string, Buffer>();
  r.get(['/portal', '/portal/*rest'], (req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    varyOnEncoding(res);
    if (!page.has('') && existsSync(indexFile)) page.set('', readFileSync(indexFile));
    const plain = page.get('');
    if (plain === undefined) {
      res.status(503).json({ detail: 'The portal is not built: run npm run build:portal (npm ci does it)' });
      return;
    }
    const encoding = pickEncoding(req, indexFile);
    if (encoding && !page.has(encoding.suffix)) page.set(encoding.suffix, readFileSync(indexFile + encoding.suffix));
    res.type('html');
    if (encoding) res.setHeader('Content-Encoding', encoding.token);
    res.send(encoding ? page.get(encoding.suffix) : plain);
  });
  return r;
}
