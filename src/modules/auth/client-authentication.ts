import { oauthError } from './token-errors.ts';

export type ClientAuthentication = { clientId: string; clientSecret: string; via: 'basic' | 'form' } | null;

/** A failed client authentication (RFC 6749 section 5.2): Basic is the scheme we take in the header. */
export const invalidClient = (detail: string) => oauthError('unauthorized', 'invalid_client', detail, { 'WWW-Authenticate': 'Basic realm="idverify"' });

const unescape = (s: string) => {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
};

/**
 * The client credentials of a token request, whatever the grant: HTTP Basic, whose user name and
 * password are form-urlencoded before base64 (RFC 6749 section 2.3.1), or `client_id` and
 * `client_secret` in the form; never both. null when the request names no client. A Basic header
 * with an empty id and secret (`Basic Og==`, what Swagger UI sends when its client fields are left
 * empty) names no client either.
 */
export function clientAuthentication(authorization: string | undefined, form: Record<string, string>): ClientAuthentication {
  const inForm = form.client_id !== undefined || form.client_secret !== undefined;
  if (authorization && /^basic(\s|$)/i.test(authorization)) {
    if (inForm) throw oauthError('bad_request', 'invalid_request', 'Send the client credentials either in HTTP Basic or in the form, not both');
    const encoded = authorization.slice(5).trim();
    const decoded = /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) ? Buffer.from(encoded, 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    if (colon < 0) throw invalidClient('HTTP Basic credentials must be base64(client_id:client_secret)');
    const [clientId, clientSecret] = [unescape(decoded.slice(0, colon)), unescape(decoded.slice(colon + 1))];
    if (clientId === '' && clientSecret === '') return null;
    return { clientId, clientSecret, via: 'basic' };
  }
  if (!inForm) return null;
  if (form.client_id === undefined) throw oauthError('bad_request', 'invalid_request', 'Field required: client_id');
  if (form.client_secret === undefined) throw oauthError('bad_request', 'invalid_request', 'Field required: client_secret');
  return { clientId: form.client_id, clientSecret: form.client_secret, via: 'form' };
}
