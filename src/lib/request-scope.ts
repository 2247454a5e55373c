import { AsyncLocalStorage } from 'node:async_hooks';
import type { RequestHandler } from 'express';

/** Where a request came from: its id (X-Request-Id) and its source address (behind TRUST_PROXY). */
export type RequestOrigin = { requestId: string; ip: string | null };

// The origin is worked out only when something asks for it (the address goes through `trust proxy`):
// most requests record no event.
const scope = new AsyncLocalStorage<() => RequestOrigin>();

/**
 * Opens the request's scope, after `requestId`: whatever the request causes in this process (awaited
 * or not, body parsers included: they keep the async context) sees its origin, so a writer that must
 * record it (the audit trail) reads it here and no caller has to remember to pass it on. A job or an
 * admin command runs in no request's scope.
 */
export const requestScope: RequestHandler = (req, _res, next) => {
  // The socket's address is read now (Node keeps it for the connection's life, one look per
  // connection): once a caller resets the connection it is gone, and an event written after that (a
  // revocation the caller did not wait for) would lose its address.
  void req.socket.remoteAddress;
  scope.run(() => ({ requestId: req.id, ip: req.ip ?? req.socket.remoteAddress ?? null }), next);
};

/** The origin of the request this code runs for, or null outside any (jobs, commands, sweeps). */
export function currentOrigin(): RequestOrigin | null {
  return scope.getStore()?.() ?? null;
}

/**
 * Runs `fn` outside any request's scope: for what is made once and then serves every request (a
 * batcher's own context), which must neither keep the request that made it nor hand its origin on.
 */
export function outsideAnyRequest<T>(fn: () => T): T {
  return scope.exit(fn);
}

/** Runs `fn` as if for a request from `origin` (benchmarks and tests that call the writer directly). */
export function withinOrigin<T>(origin: RequestOrigin, fn: () => T): T {
  return scope.run(() => origin, fn);
}
