import type { Request, Response, Router } from 'express';
import type { Lookups } from './lookups.ts';

/**
 * One way of speaking to the authority: its paths, how a caller proves who it is, and the shape
 * of its bodies. The simulator serves every dialect side by side, each under its own paths, so
 * one simulator (the same people, latency, limits, outages and counters) stands in for whichever
 * provider the service is configured for.
 */
export type DialectName = 'sandbox' | 'prembly' | 'dojah';

/** What the simulator was started with; unset means "not checked". */
export interface Credentials {
  apiKey?: string | undefined;
  appId?: string | undefined;
}

export interface SimDialect {
  name: DialectName;
  /** Where the dialect's paths start; '' for the sandbox, which takes every path no other claims. */
  prefix: string;
  /** The calls that meet the outage and the limits (req.path as the application sees it). */
  isLookup(req: Request): boolean;
  /** The credential as presented, '' when absent: what the limits count by. */
  credential(req: Request): string;
  authorised(req: Request, credentials: Credentials): boolean;
  /** Any refusal or fault (401, 429, 503, 504, 400, 500), in the dialect's own body. */
  error(res: Response, status: number, message: string): void;
  routes(lookups: Lookups): Router;
}

export function dialectFor(dialects: readonly SimDialect[], rawPath: string): SimDialect {
  // Express matches routes without regard to case: so must the gate, or /IdentityPass/... would pass it.
  const path = rawPath.toLowerCase();
  const named = dialects.find((d) => d.prefix !== '' && (path === d.prefix || path.startsWith(`${d.prefix}/`)));
  const fallback = dialects.find((d) => d.prefix === '');
  const dialect = named ?? fallback;
  if (!dialect) throw new Error('identity simulator: no dialect takes unclaimed paths');
  return dialect;
}

/** The path a lookup is recognised by: no trailing slash, any case. */
export function lookupPath(req: Request): string {
  return req.path.replace(/\/+$/, '').toLowerCase();
}
