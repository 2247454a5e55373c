import { randomUUID } from 'node:crypto';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { BackendTerminatedError, BackendTerminatedUnexpectedlyError, ConnectionError, UniqueIntegrityConstraintViolationError } from 'slonik';
import { z } from 'zod';
import { AppError, describe } from './errors.ts';
import type { Logger } from './logger.ts';
import { postgresCode } from './db.ts';

const REQUEST_ID = /^[A-Za-z0-9._-]{8,64}$/;

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
  }
}

/** Keeps a caller's X-Request-Id when it is safe to log, otherwise issues one; echoed on every response. */
export const requestId: RequestHandler = (req, res, next) => {
  const given = req.get('x-request-id');
  req.id = given && REQUEST_ID.test(given) ? given : randomUUID();
  res.setHeader('X-Request-Id', req.id);
  next();
};

/**
 * Aborts when the caller goes away before its answer was sent (the connection closed first): work
 * done only for this answer (a face job) can then be dropped.
 */
export function callerGone(req: Request): AbortSignal {
  const ac = new AbortController();
  const res = req.res;
  res?.once('close', () => {
    if (!res.writableFinished) ac.abort();
  });
  return ac.signal;
}

/** Rejects bodies of the wrong media type before any parser runs. */
export function requireContentType(kind: 'json' | 'form'): RequestHandler {
  const expected = kind === 'json' ? 'application/json' : 'application/x-www-form-urlencoded';
  return (req, _res, next) => {
    if (!req.is(expected)) {
      next(new AppError('unsupported_media_type', `Content-Type must be ${expected}`));
      return;
    }
    next();
  };
}

/**
 * The representation a GET answers in, from its Accept header (`types` in the server's order of
 * preference; no Accept or `*\/*` takes the first): one rule for every route that offers files, so
 * a type the route cannot make is 406 everywhere rather than a file of another type.
 */
export function negotiate<T extends string>(req: Request, types: readonly T[]): T {
  const chosen = req.accepts([...types]);
  if (chosen === false) throw new AppError('not_acceptable', `Accept must allow ${types.join(', ')}`);
  return chosen as T;
}

/**
 * Missing fields and wrong types are 422 (with the field paths); a well-typed value that breaks a
 * rule is 400. That split is the contract's (README: Conventions).
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const bad = badCharacterAt(input, [], 0);
  if (bad) throw new AppError('bad_request', `${bad.path.join('.') || 'body'}: ${bad.rule}`);
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  throw zodToAppError(result.error);
}

/**
 * A route's path parameters, judged by the very schema the OpenAPI document shows for them (so the
 * document is never looser than the server). A value that breaks it answers `refusal` when given (a
 * malformed id names nothing: the route's own 404), else 400 with the schema's own message, which
 * names the parameter itself.
 */
export function parsePathParams<S extends z.ZodType>(schema: S, params: unknown, refusal?: AppError): z.infer<S> {
  const result = schema.safeParse(params);
  if (result.success) return result.data;
  throw refusal ?? new AppError('bad_request', result.error.issues[0]!.message);
}

/** A row id in a path (a user, an invitation, an organisation): 1 to 15 digits, no leading zero, so a Number holds it exactly. */
export const serialIdParam = z.string().regex(/^[1-9]\d{0,14}$/);

export const CONTROL_CHARACTERS = 'must not contain control characters';
export const LONE_SURROGATES = 'must be well-formed text (no lone surrogates)';

// C0 control characters (NUL to US) but tab, which free text may carry. PostgreSQL refuses NUL deep
// inside a query; the others have no business in a name, a token or a password either.
const C0_BUT_TAB = /[\u0000-\u0008\u000a-\u001f]/;

/**
 * Where the first string (or key) holding a control character or a lone surrogate (a `\ud800`
 * escape in JSON: no UTF-8 text can carry it, and PostgreSQL refuses it) sits in a parsed body or
 * query, and which rule it breaks, or null. Every body and query string reaches the routes through
 * parseInput, so this is the one central check: such input is a 400 before any query runs, and is
 * logged as a client error.
 */
function badCharacterAt(value: unknown, path: string[], depth: number): { path: string[]; rule: string } | null {
  if (typeof value === 'string') return ruleBroken(value, path);
  if (depth > 32 || value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return null;
  for (const [key, v] of Object.entries(value)) {
    const found = ruleBroken(key, path) ?? badCharacterAt(v, [...path, key], depth + 1);
    if (found) return found;
  }
  return null;
}

function ruleBroken(s: string, path: string[]): { path: string[]; rule: string } | null {
  if (C0_BUT_TAB.test(s)) return { path, rule: CONTROL_CHARACTERS };
  if (!s.isWellFormed()) return { path, rule: LONE_SURROGATES };
  return null;
}

export function zodToAppError(error: z.ZodError): AppError {
  const issues = error.issues;
  const typeIssues = issues.filter((i) => i.code === 'invalid_type' || (i.code === 'invalid_union' && isTypeUnion(i)));
  const first = typeIssues[0] ?? issues[0]!;
  const field = first.path.map(String).join('.') || 'body';
  if (typeIssues.length > 0) {
    const missing = first.code === 'invalid_type' && /received undefined/.test(first.message);
    const detail = missing ? `Field required: ${field}` : `Invalid type for ${field}: ${first.message}`;
    return new AppError('validation', detail, {
      extra: { errors: typeIssues.map((i) => ({ loc: i.path.map(String), msg: i.message, type: i.code })) },
    });
  }
  return new AppError('bad_request', field === 'body' ? first.message : `${field}: ${first.message}`);
}

function isTypeUnion(issue: z.core.$ZodIssue): boolean {
  return issue.code === 'invalid_union' && issue.errors.every((branch) => branch.every((i) => i.code === 'invalid_type'));
}

export const notFound: RequestHandler = (_req, _res, next) => {
  next(new AppError('not_found', 'Not Found'));
};

function sendError(res: Response, status: number, body: Record<string, unknown>, headers?: Record<string, string>): void {
  if (res.headersSent) return;
  if (headers) for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.status(status).json(body);
}

/** The one place where failures become HTTP answers. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof AppError) {
      sendError(res, err.status, { detail: err.detail, ...err.extra }, err.headers);
      return;
    }
    if (err instanceof z.ZodError) {
      const mapped = zodToAppError(err);
      sendError(res, mapped.status, { detail: mapped.detail, ...mapped.extra });
      return;
    }
    const e = err as { type?: string; status?: number; statusCode?: number; code?: string };
    // body-parser errors carry a type and a 4xx status.
    if (e.type === 'entity.parse.failed') return sendError(res, 400, { detail: 'Malformed request body' });
    if (e.type === 'entity.too.large') return sendError(res, 413, { detail: 'Request body too large' });
    if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') return sendError(res, 415, { detail: 'Unsupported body encoding' });
    if (e.type === 'request.aborted') return sendError(res, 400, { detail: 'Request aborted' });
    // A compressed body that does not decompress (Content-Encoding: gzip/deflate/br with other bytes).
    if (typeof e.code === 'string' && /^Z_|^ERR_(BROTLI|ZLIB)/.test(e.code)) return sendError(res, 400, { detail: 'Request body could not be decoded' });
    const status = typeof e.status === 'number' ? e.status : e.statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return sendError(res, status, { detail: status === 415 ? 'Unsupported media type' : 'Invalid request' });
    }
    // Values PostgreSQL cannot store (NUL bytes, lone surrogates) or numbers beyond a column's range:
    // the input was bad, so the caller hears 400 rather than a 500 for our database's limits.
    const pgCode = postgresCode(err);
    if (pgCode === '22021' || pgCode === '22P05' || pgCode === '22P02' || pgCode === '22025') {
      return sendError(res, 400, { detail: 'Request contains characters or values that cannot be processed' });
    }
    // A date or time the database cannot hold (22008 out of range, 22007 bad format): bad input too.
    if (pgCode === '22008' || pgCode === '22007') return sendError(res, 400, { detail: 'A date or time in the request is out of range' });
    if (pgCode === '22003') return sendError(res, 400, { detail: 'A number in the request is out of range' });
    if (err instanceof UniqueIntegrityConstraintViolationError) {
      return sendError(res, 409, { detail: 'Conflict with an existing resource' });
    }
    if (isUnavailable(err)) {
      logger.warn({ reqId: req.id, err: describe(err) }, 'dependency unavailable');
      return sendError(res, 503, { detail: 'Service temporarily unavailable, retry with backoff', request_id: req.id }, { 'Retry-After': '5' });
    }
    logger.error({ reqId: req.id, err: describe(err) }, 'unhandled error');
    sendError(res, 500, { detail: 'Internal server error', request_id: req.id });
  };
}

/** Redis or PostgreSQL out of reach: the caller should retry later, nothing was done. */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof ConnectionError || err instanceof BackendTerminatedError || err instanceof BackendTerminatedUnexpectedlyError) return true;
  // slonik keeps the socket's error on `cause`; look one level down for its code and message.
  const cause = (err as { cause?: unknown }).cause;
  if (cause && cause !== err && isUnavailable(cause)) return true;
  const msg = err instanceof Error ? err.message : '';
  const code = (err as { code?: string }).code;
  return (
    code === 'EPIPE' ||
    code === '57P03' ||
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'ETIMEDOUT' ||
    code === '57P01' ||
    /enableOfflineQueue|Connection is closed|Stream isn't writeable|connect ECONNREFUSED|Reached the max retries|timeout exceeded when trying to connect|Connection terminated/i.test(msg)
  );
}

/**
 * False when the browser says the request came from another site (no such header: not a browser's
 * cross-site request): the check of the forms of the person's pages (a link's, a receipt's).
 */
export function fromThisOrigin(req: Request): boolean {
  const site = req.get('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin') return false;
  const origin = req.get('origin');
  if (origin === undefined) return true;
  try {
    return new URL(origin).host.toLowerCase() === (req.get('host') ?? '').toLowerCase();
  } catch {
    return false;
  }
}
