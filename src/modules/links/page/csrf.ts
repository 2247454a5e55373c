import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The page's forms carry a signed token bound to the link: `<issued, unix s>.<16 random bytes>.<HMAC>`,
 * the HMAC-SHA256 of the link id, the instant and the nonce under a key derived from the JWT secrets
 * (each API process derives the same key; during a rotation every secret still checks). No cookie and
 * no server state: the page has no session to tie a cookie to, and phones open such links in the
 * in-app browsers of messaging apps, which may refuse or isolate cookies. A token of one link does not
 * pass on another, nor past TOKEN_TTL_MS. Browsers' own Origin and Sec-Fetch-Site headers must also
 * say the request came from this page's origin (OWASP's defence in depth).
 */
export const CSRF_TTL_MS = 2 * 3600 * 1000;

export type CsrfKeys = readonly Buffer[];

export function csrfKeys(secrets: readonly string[]): CsrfKeys {
  return secrets.map((s) => Buffer.from(hkdfSync('sha256', s, '', 'idverify verification-link page csrf', 32)));
}

const mac = (key: Buffer, linkId: string, issued: string, nonce: string) => createHmac('sha256', key).update(`${linkId}.${issued}.${nonce}`).digest('base64url');

export function issueCsrf(keys: CsrfKeys, linkId: string, now: Date): string {
  const issued = String(Math.floor(now.getTime() / 1000));
  const nonce = randomBytes(16).toString('base64url');
  return `${issued}.${nonce}.${mac(keys[0]!, linkId, issued, nonce)}`;
}

export function checkCsrf(keys: CsrfKeys, linkId: string, token: unknown, now: Date): boolean {
  if (typeof token !== 'string') return false;
  const m = /^(\d{1,12})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m) return false;
  const [, issued, nonce, given] = m as unknown as [string, string, string, string];
  const age = now.getTime() - Number(issued) * 1000;
  // A minute of slack for clocks of API processes a little apart.
  if (age > CSRF_TTL_MS || age < -60_000) return false;
  const givenBytes = Buffer.from(given, 'base64url');
  return keys.some((k) => {
    const expected = Buffer.from(mac(k, linkId, issued, nonce), 'base64url');
    return expected.length === givenBytes.length && timingSafeEqual(expected, givenBytes);
  });
}

// The page's forms are judged by the one origin rule of the server's own pages.
export { fromThisOrigin } from '../../../lib/http.ts';
