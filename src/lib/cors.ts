import type { RequestHandler } from 'express';
import { AppError } from './errors.ts';

/**
 * Server-to-server API: a request that carries an Origin outside the operator's allow-list is
 * refused outright (403, no CORS headers), preflights included. Same-origin pages (the /docs page)
 * are not cross-origin and pass.
 */
export function corsPolicy(allowed: string[]): RequestHandler {
  const allow = new Set(allowed.map((o) => o.replace(/\/$/, '').toLowerCase()));
  return (req, res, next) => {
    const origin = req.get('origin');
    if (!origin) return next();
    const normalised = origin.replace(/\/$/, '').toLowerCase();
    let sameOrigin = false;
    try {
      sameOrigin = new URL(normalised).host === (req.get('host') ?? '').toLowerCase();
    } catch {
      sameOrigin = false;
    }
    if (!allow.has(normalised) && !sameOrigin) {
      next(new AppError('forbidden', 'Cross-origin requests are not allowed; call this API from your server'));
      return;
    }
    res.setHeader('Vary', 'Origin');
    if (allow.has(normalised)) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      if (req.method === 'OPTIONS') {
        res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
        res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, Idempotency-Key, Prefer, X-Request-Id');
        res.setHeader('Access-Control-Max-Age', '600');
        res.status(204).end();
        return;
      }
    }
    next();
  };
}
