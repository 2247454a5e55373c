import type { RequestHandler } from 'express';

/**
 * When the unversioned paths were deprecated in favour of /v1 (1 January 2026, 00:00 UTC), as an
 * RFC 9745 structured-field date. No Sunset header goes with it: the unversioned form stays
 * accepted for as long as the contract promises it.
 */
export const UNVERSIONED_DEPRECATED_AT = '@1767225600';

const VERSIONED_BASE = '/v1';

// The successor's address repeats the request target; anything that could break out of the
// Link header's <...> is percent-encoded.
const linkSafe = (target: string) => target.replace(/[^\x21-\x7e]|[<>"\\]/g, (c) => encodeURIComponent(c));

/**
 * Mounted right before the API router on the unversioned path: every answer says it is deprecated
 * and links to its /v1 twin...
 */
export const markUnversioned: RequestHandler = (req, res, next) => {
  res.setHeader('Deprecation', UNVERSIONED_DEPRECATED_AT);
  res.setHeader('Link', `<${VERSIONED_BASE}${linkSafe(req.originalUrl)}>; rel="successor-version"`);
  next();
};

/**
 * ...and mounted right after it: reached only when no route of the API matched (an error skips
 * it), so the path has no twin and the 404 that follows keeps neither header.
 */
export const unmarkUnversioned: RequestHandler = (_req, res, next) => {
  res.removeHeader('Deprecation');
  res.removeHeader('Link');
  next();
};
