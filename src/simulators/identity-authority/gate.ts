import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Limits } from './limits.ts';
import type { Outage } from './outage.ts';
import type { StatsRecorder } from './stats.ts';

const LOOKUP_PATHS = new Set(['/v1/nin', '/v1/phone', '/v1/demography']);

export function isLookup(req: Request): boolean {
  return req.method === 'POST' && LOOKUP_PATHS.has(req.path.replace(/\/+$/, '').toLowerCase());
}

/**
 * What a lookup meets before the authority looks at it: an outage, then the per-key limits. The
 * refusals answer at once, before the body is read, the way a gateway in front of the authority
 * does; admitted lookups stay in flight until their answer is sent or the client leaves.
 */
export function lookupGate(deps: { outage: Outage; limits: Limits; stats: StatsRecorder }): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!isLookup(req)) return next();
    const now = Date.now();
    const outage = deps.outage.current(now);
    if (outage.mode === '503') {
      deps.stats.outage('503');
      res.status(503).json({ status: false, message: 'Service temporarily unavailable' });
      return;
    }
    if (outage.mode === 'hang') {
      deps.stats.outage('hang');
      deps.outage.hold(res);
      return;
    }

    // The key the client presents: with an API key configured only that one gets this far;
    // without one, each distinct Authorization header (or its absence) is a key of its own.
    const admission = deps.limits.admit(req.get('authorization') ?? '', now);
    if (!admission.ok) {
      deps.stats.limited(now, admission.reason);
      const message = admission.reason === 'rate' ? 'Too many requests' : 'Too many concurrent requests';
      res.status(429).set('Retry-After', String(admission.retryAfterSeconds)).json({ status: false, message });
      return;
    }
    deps.stats.accepted(now);
    res.on('close', () => {
      admission.release();
      deps.stats.released();
    });
    next();
  };
}
