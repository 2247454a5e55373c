import type { Request, RequestHandler } from 'express';
import type { Logger } from './logger.ts';

type Level = 'debug' | 'info' | 'warn' | 'error';

/** The route's pattern (`/verify-nin`, `/docs/:file`), or `unmatched`: never the path as sent. */
export function routePattern(req: Request): string {
  const path = req.route?.path as unknown;
  return typeof path === 'string' ? path : 'unmatched';
}

// 502/503/504 are documented outcomes (upstream down, dependency cut, wait ran out), not our bugs.
const levelOf = (status: number): Level => (status === 500 ? 'error' : status > 500 ? 'warn' : status >= 400 ? 'info' : 'debug');

/**
 * One line per request, when its level is enabled, and the latency histogram, from one listener.
 * In place of pino-http, which builds a child logger per request (serialising and redacting its
 * bindings) whether or not the line is ever written: measured at 2-3 % of the API's CPU on a requery,
 * where at the usual `info` level a 2xx line (debug) is never written.
 *
 * Only method, route pattern and status: bodies, query strings, auth headers and raw paths (which may
 * carry a NIN) never reach the log or a metric label. A response the client abandoned is logged as
 * `request aborted` (status as far as it got).
 */
export function accessLog(logger: Logger, observe: (labels: { method: string; route: string; status: string }, seconds: number) => void, skip: (req: Request) => boolean): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    // Decided now: a router further down rewrites req.url for its own routes.
    const skipped = skip(req);
    let done = false;
    const end = (aborted: boolean) => {
      if (done) return;
      done = true;
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      const route = routePattern(req);
      // An abandoned response has no status of its own: it is logged, not counted in the histogram.
      if (!aborted) observe({ method: req.method, route, status: String(res.statusCode) }, seconds);
      if (skipped) return;
      const level = aborted ? 'info' : levelOf(res.statusCode);
      if (!logger.isLevelEnabled(level)) return;
      const line = { req: { id: req.id, method: req.method }, res: { status: res.statusCode }, route, responseTime: Math.round(seconds * 1000) };
      logger[level](line, aborted ? 'request aborted' : res.statusCode >= 500 ? 'request errored' : 'request completed');
    };
    res.once('finish', () => end(false));
    res.once('close', () => end(!res.writableFinished));
    next();
  };
}

