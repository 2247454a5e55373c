import { AppError } from '../../lib/errors.ts';

/**
 * Where the client credentials grant finds its pair: HTTP Basic, whose user name and password are
 * form-urlencoded before base64 (RFC 6749 section 2.3.1), or the form body; never both.
 */
export function clientAuthentication(authorization: string | undefined, body: Record<string, unknown>): Record<string, unknown> {
  const inBody = body.client_id !== undefined || body.client_secret !== undefined;
  if (!authorization || !/^basic /i.test(authorization)) return { client_id: body.client_id, client_secret: body.client_secret };
  if (inBody) throw new AppError('bad_request', 'Send the client credentials either in HTTP Basic or in the form, not both');
  const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return { client_id: undefined, client_secret: undefined };
  const unescape = (s: string) => {
    try {
      return decodeURIComponent(s.replace(/\+/g, ' '));
    } catch {
      return s;
    }
  };
  return { client_id: unescape(decoded.slice(0, colon)), client_secret: unescape(decoded.slice(colon + 1)) };
}
