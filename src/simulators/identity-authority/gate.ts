import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { SimDialect } from './dialect.ts';
import type { Limits } from './limits.ts';
import type { Outage } from './outage.ts';
import type { StatsRecorder } from './stats.ts';

/**
 * What a lookup meets before the authority looks at it: an outage, then the per-key limits. The
 * refusals answer at once, before the body is read, the way a gateway in front of the authority
 * does, each in the body of the dialect that was spoken; admitted lookups stay in flight until
 * their answer is sent or the client leaves.
 */
export function lookupGate(deps: { outage: Outage; limits: Limits; stats: StatsRecorder; dialectOf: (req: Request) => SimDialect }): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const dialect = deps.dialectOf(req);
    if (!dialect.isLookup(req)) return next();
    const now = Date.now();
    const outage = deps.outage.current(now);
    if (outage.mode === '503') {
      deps.stats.outage('503');
      dialect.error(res, 503, 'Service temporarily unavailable');
      return;
    }
    if (outage.mode === 'hang') {
      deps.stats.outage('hang');
      deps.outage.hold(res, () => dialect.error(res, 504, 'Upstream timeout'));
      return;
    }

    // The key the client presents, the dialect's way: with an API key configured only that one gets
    // this far; without one, each distinct credential (or its absence) is a key of its own.
    const admission = deps.limits.admit(`${dialect.name}:${dialect.credential(req)}`, now);
    if (!admission.ok) {
      deps.stats.limited(now, admission.reason);
      const message = admission.reason === 'rate' ? 'Too many requests' : 'Too many concurrent requests';
      res.set('Retry-After', String(admission.retryAfterSeconds));
      dialect.error(res, 429, message);
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
