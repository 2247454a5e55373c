import type { Request } from 'express';

// Set by the portal's bridge on the request object itself (never from a header a caller could send),
// so a use case can tell a browser session of the portal from an integrator's server.
const PORTAL = Symbol('portal');

export function markPortalRequest(req: Request): void {
  (req as unknown as Record<symbol, boolean>)[PORTAL] = true;
}

export function isPortalRequest(req: Request): boolean {
  return (req as unknown as Record<symbol, boolean>)[PORTAL] === true;
}
