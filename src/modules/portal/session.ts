import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { AppError } from '../../lib/errors.ts';
import { markPortalRequest } from '../../lib/portal-request.ts';
import type { KeyRing } from '../../lib/crypto.ts';

/**
 * The portal's session: the API's own bearer token, kept in an HttpOnly cookie so browser
 * JavaScript never sees it. Requests under /portal/api are the API's routes; this bridge turns the
 * cookie back into the Authorization header they check, so every rule (who may do what, disabled
 * users, changed passwords, revoked tokens) is the API's own and is applied on every request.
 */
export const SESSION_COOKIE = 'idv_portal_session';
/**
 * The name wherever the cookie is Secure. A browser keeps a `__Host-` cookie only when it is Secure,
 * has Path=/ and no Domain, so a cookie planted from a sibling domain (Domain=.example.com) can
 * never carry it: the plain name, which such a cookie can carry, is then not read at all.
 */
export const HOST_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;
export const CSRF_HEADER = 'x-csrf-token';
export const CSRF_REFUSED = 'Missing or invalid CSRF token; reload the portal';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export type SessionKeys = { csrfKey: Buffer };

/** The CSRF key is derived from the first encryption key: the same in every API process, never the key itself. */
export function sessionKeys(ring: KeyRing): SessionKeys {
  const first = ring[0];
  if (!first) throw new Error('no encryption key configured');
  return { csrfKey: Buffer.from(hkdfSync('sha256', first.key, Buffer.alloc(0), 'portal-csrf-token', 32)) };
}

/** Bound to the session's token: a CSRF token is worthless without the cookie it was made for, and dies with it. */
export function csrfTokenFor(keys: SessionKeys, sessionToken: string): string {
  return createHmac('sha256', keys.csrfKey).update(sessionToken).digest('base64url');
}

export function readCookie(req: Request, name: string): string | null {
  const header = req.get('cookie');
  if (!header) return null;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) {
      // A cookie that is not valid percent-encoding is no session (not a 500).
      try {
        return decodeURIComponent(part.slice(i + 1).trim());
      } catch {
        return null;
      }
    }
  }
  return null;
}

// Browsers accept Secure cookies from http://localhost, but an operator trying the sandbox over
// plain http on 127.0.0.1 would be signed out on every page: Secure is dropped there, and only there.
function plainLocalhost(req: Request): boolean {
  return !req.secure && /^(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/i.test(req.get('host') ?? '');
}

/**
 * The session cookie this request uses, decided as Secure is: `__Host-` (Path=/, Secure) wherever
 * the cookie is Secure, that is everywhere but plain http to localhost, where the plain name and
 * Path=/portal stay. Setting, clearing and reading all follow it, so one request never mixes the two.
 */
function sessionCookie(req: Request): { name: string; attributes: string; secure: string } {
  return plainLocalhost(req)
    ? { name: SESSION_COOKIE, attributes: 'Path=/portal; HttpOnly; SameSite=Strict', secure: '' }
    : { name: HOST_SESSION_COOKIE, attributes: 'Path=/; HttpOnly; SameSite=Strict', secure: '; Secure' };
}

function setCookie(req: Request, res: Response, value: string, maxAgeSeconds: number): void {
  const c = sessionCookie(req);
  res.append('Set-Cookie', `${c.name}=${value}; ${c.attributes}; Max-Age=${maxAgeSeconds}${c.secure}`);
}

export function setSessionCookie(req: Request, res: Response, token: string, maxAgeSeconds: number): void {
  setCookie(req, res, encodeURIComponent(token), maxAgeSeconds);
}

export function clearSessionCookie(req: Request, res: Response): void {
  setCookie(req, res, '', 0);
}

/** The session token this request carries under the name in force for it, or null. */
export function readSessionCookie(req: Request): string | null {
  return readCookie(req, sessionCookie(req).name);
}

/**
 * In front of the API's routes under /portal/api. A bearer header sent by the page itself is
 * dropped (the portal's only credential is the cookie); every change needs the CSRF header that
 * matches the cookie. A sign-in answer's token is moved into the cookie on its way out, and the page
 * gets the CSRF token instead. Mounted at /portal/api and at /portal/api/v1, so `req.path` is the
 * API path without its version either way.
 */
export function portalBridge(keys: SessionKeys, ttlSeconds: number): RequestHandler {
  return (req, res, next) => {
    markPortalRequest(req);
    delete req.headers.authorization;
    const token = readSessionCookie(req);
    if (!SAFE_METHODS.has(req.method) && token !== null) {
      const sent = Buffer.from(req.get(CSRF_HEADER) ?? '');
      const expected = Buffer.from(csrfTokenFor(keys, token));
      if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) {
        next(new AppError('forbidden', CSRF_REFUSED, { extra: { code: 'csrf_failed' } }));
        return;
      }
    }
    if (token !== null) req.headers.authorization = `Bearer ${token}`;
    // Express matches routes without regard to case: so do these, or /LOGIN would hand the token to the page.
    if (req.method === 'POST' && /^\/login\/?$/i.test(req.path)) {
      // Signing in from the portal is the API's password grant; only its answer changes shape.
      const json = res.json.bind(res);
      res.json = (body: unknown) => {
        const b = body as { access_token?: unknown; expires_in?: unknown; require_password_change?: unknown } | null;
        if (res.statusCode === 200 && b && typeof b.access_token === 'string') {
          const ttl = typeof b.expires_in === 'number' ? b.expires_in : ttlSeconds;
          setSessionCookie(req, res, b.access_token, ttl);
          return json({ csrf_token: csrfTokenFor(keys, b.access_token), expires_in: ttl, require_password_change: b.require_password_change === true });
        }
        return json(body);
      };
    }
    // Cleared only once the API has signed the session out (its 204 to POST /logout, which passed
    // the CSRF check above): a link or a GET from another site, a refused or failed sign-out, leaves
    // the session as it was.
    if (req.method === 'POST' && /^\/logout\/?$/i.test(req.path)) {
      const end = res.end.bind(res) as (...args: unknown[]) => Response;
      res.end = ((...args: unknown[]) => {
        if (res.statusCode === 204 && !res.headersSent) clearSessionCookie(req, res);
        return end(...args);
      }) as Response['end'];
    }
    next();
  };
}

/**
 * Seconds until the session's token expires, from its `exp` claim, or null if it carries none. Read,
 * not verified: this only tells the page when to warn (every API request still checks the token), and
 * counting in seconds left rather than an instant keeps the browser's own clock out of it.
 */
export function secondsLeft(token: string, now: Date): number | null {
  try {
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof claims.exp === 'number' ? Math.max(0, Math.floor(claims.exp - now.getTime() / 1000)) : null;
  } catch {
    return null;
  }
}

/**
 * GET /portal/session: whether the browser holds a session, its CSRF token (never the bearer token)
 * and the seconds it has left (the page warns five minutes before the end).
 */
export function sessionStatus(keys: SessionKeys, clock: { now(): Date }): RequestHandler {
  return (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const token = readSessionCookie(req);
    res.json(token ? { signed_in: true, csrf_token: csrfTokenFor(keys, token), expires_in: secondsLeft(token, clock.now()) } : { signed_in: false, csrf_token: null, expires_in: null });
  };
}
