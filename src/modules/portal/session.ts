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

export function setSessionCookie(req: Request, res: Response, token: string, maxAgeSeconds: number): void {
  const secure = plainLocalhost(req) ? '' : '; Secure';
  res.append('Set-Cookie', `${SESSION_COOKIE}=${encodeURIComponent(token)}; Path=/portal; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`);
}

export function clearSessionCookie(req: Request, res: Response): void {
  const secure = plainLocalhost(req) ? '' : '; Secure';
  res.append('Set-Cookie', `${SESSION_COOKIE}=; Path=/portal; HttpOnly; SameSite=Strict; Max-Age=0${secure}`);
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
    const token = readCookie(req, SESSION_COOKIE);
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
    if (/^\/logout\/?$/i.test(req.path)) clearSessionCookie(req, res);
    next();
  };
}

/** GET /portal/session: whether the browser holds a session, and its CSRF token (never the bearer token). */
export function sessionStatus(keys: SessionKeys): RequestHandler {
  return (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const token = readCookie(req, SESSION_COOKIE);
    res.json(token ? { signed_in: true, csrf_token: csrfTokenFor(keys, token) } : { signed_in: false, csrf_token: null });
  };
}
