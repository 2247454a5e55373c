import type { Request } from 'express';

/** A route parameter as a string ('' when absent), whatever shape express gives it. */
export function param(req: Request, name: string): string {
  const v = req.params[name];
  return typeof v === 'string' ? v : '';
}

/** The parsed body as an object, or an empty one when it is absent or not an object. */
export function bodyOf(req: Request): Record<string, unknown> {
  return typeof req.body === 'object' && req.body !== null ? req.body : {};
}
