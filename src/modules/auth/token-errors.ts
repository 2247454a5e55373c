import type { ErrorRequestHandler } from 'express';
import { AppError, type ErrorCode } from '../../lib/errors.ts';

// The token endpoint answers an OAuth 2.0 client in its own terms (RFC 6749 section 5.2): every
// error body carries `error` and `error_description` beside the service's usual `detail`.

export const OAUTH_ERRORS = ['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope'] as const;
export type OAuthError = (typeof OAUTH_ERRORS)[number];

export function oauthError(code: ErrorCode, error: OAuthError, detail: string, headers?: Record<string, string>): AppError {
  return new AppError(code, detail, { extra: { error, error_description: detail }, ...(headers ? { headers } : {}) });
}

/**
 * Refusals raised before the token endpoint's own checks (a wrong media type, a body that does not
 * parse, one too large) get the OAuth `error` too: for an OAuth client they are invalid requests.
 * Everything else (429, 503, 500) passes through unchanged.
 */
export const tokenEndpointErrors: ErrorRequestHandler = (err, _req, _res, next) => {
  if (err instanceof AppError) {
    // A 401 raised by the client's own checks (an expired client, an address outside its list) is a
    // failed client authentication: invalid_client, with the Basic challenge (RFC 6749 section 5.2).
    if (err.extra?.error === undefined && err.status === 401) {
      next(oauthError(err.code, 'invalid_client', err.detail, { ...err.headers, 'WWW-Authenticate': 'Basic realm="idverify"' }));
      return;
    }
    if (err.extra?.error === undefined && err.status >= 400 && err.status < 500 && err.status !== 429) {
      next(oauthError(err.code, 'invalid_request', err.detail, err.headers));
      return;
    }
    next(err);
    return;
  }
  const e = err as { type?: string };
  if (e.type === 'entity.parse.failed' || e.type === 'request.aborted') return next(oauthError('bad_request', 'invalid_request', 'Malformed request body'));
  if (e.type === 'entity.too.large') return next(oauthError('payload_too_large', 'invalid_request', 'Request body too large'));
  if (e.type === 'parameters.too.many') return next(oauthError('payload_too_large', 'invalid_request', 'Too many parameters'));
  if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') return next(oauthError('unsupported_media_type', 'invalid_request', 'Unsupported body encoding'));
  next(err);
};
