import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// The portal's session cookie: cleared only by a signed-out session, and named `__Host-`
// wherever it is Secure, so that a cookie planted from a sibling domain is never read.

let stack: Stack;
let org: OrgFixture;

beforeAll(async () => {
  // Behind a proxy on the loopback that terminates TLS: `X-Forwarded-Proto: https` makes the request secure.
  stack = await startStack({ workers: false, env: { TRUST_PROXY: 'loopback', PUBLIC_BASE_URL: 'https://portal.example.com' } });
  org = await stack.createOrg();
});
afterAll(async () => stack?.close());

const HTTPS = { 'x-forwarded-proto': 'https' };
const PLAIN = 'idv_portal_session';
const HOST = '__Host-idv_portal_session';

/** Signs in through the bridge; the Set-Cookie line, the `name=value` pair a browser sends back, and the CSRF token. */
async function portalSignIn(headers: Record<string, string> = {}) {
  const r = await stack.api('POST', '/portal/api/login', { form: { username: org.admin.username, password: org.admin.password }, headers });
  expect(r.status).toBe(200);
  const set = r.headers.getSetCookie();
  expect(set).toHaveLength(1);
  return { set: set[0]!, pair: set[0]!.split(';')[0]!, value: set[0]!.split(';')[0]!.split('=').slice(1).join('='), csrf: r.body.csrf_token as string };
}

const me = (cookie: string, headers: Record<string, string> = {}) => stack.api('GET', '/portal/api/me', { headers: { cookie, ...headers } });

describe('only a signed-out session clears the cookie', () => {
  it('When another site links to /portal/api/logout (a GET, any spelling), then it is 404 with no Set-Cookie and the session lives on', async () => {
    const s = await portalSignIn();
    for (const path of ['/portal/api/logout', '/portal/api/v1/logout', '/portal/api/LOGOUT', '/portal/api/logout/']) {
      for (const method of ['GET', 'HEAD']) {
        const r = await stack.api(method, path, { headers: { cookie: s.pair } });
        expect(r.status, `${method} ${path}`).toBe(404);
        expect(r.headers.getSetCookie(), `${method} ${path}`).toEqual([]);
      }
    }
    expect((await me(s.pair)).status).toBe(200);
  });

  it('When a POST to logout lacks its CSRF token, carries a wrong one or has no session, then it is refused with no Set-Cookie and the session lives on', async () => {
    const s = await portalSignIn();
    for (const path of ['/portal/api/logout', '/portal/api/v1/logout']) {
      for (const headers of [{ cookie: s.pair }, { cookie: s.pair, 'x-csrf-token': 'forged' }] as Record<string, string>[]) {
        const r = await stack.api('POST', path, { headers });
        expect(r.status, path).toBe(403);
        expect(r.body).toEqual({ detail: 'Missing or invalid CSRF token; reload the portal', code: 'csrf_failed' });
        expect(r.headers.getSetCookie(), path).toEqual([]);
      }
      const anonymous = await stack.api('POST', path);
      expect(anonymous.status, path).toBe(401);
      expect(anonymous.headers.getSetCookie(), path).toEqual([]);
    }
    expect((await me(s.pair)).status).toBe(200);
  });

  it('When a sign-out of a session that had already ended is refused (401), then the cookie is not touched by it', async () => {
    const s = await portalSignIn();
    expect((await stack.api('POST', '/portal/api/logout', { headers: { cookie: s.pair, 'x-csrf-token': s.csrf } })).status).toBe(204);
    const again = await stack.api('POST', '/portal/api/logout', { headers: { cookie: s.pair, 'x-csrf-token': s.csrf } });
    expect(again.status).toBe(401);
    expect(again.headers.getSetCookie()).toEqual([]);
  });

  it('When the page signs out with its CSRF token, then 204 clears the cookie and the session is dead', async () => {
    for (const path of ['/portal/api/logout', '/portal/api/v1/Logout']) {
      const s = await portalSignIn();
      const out = await stack.api('POST', path, { headers: { cookie: s.pair, 'x-csrf-token': s.csrf } });
      expect(out.status, path).toBe(204);
      expect(out.headers.getSetCookie(), path).toEqual(['idv_portal_session=; Path=/portal; HttpOnly; SameSite=Strict; Max-Age=0']);
      expect((await me(s.pair)).status, path).toBe(401);
    }
  });
});

/** A request whose Host header is the given name (fetch always sends the URL's own). */
function withHost(host: string, method: string, path: string, headers: Record<string, string>, body = ''): Promise<{ status: number; setCookie: string[]; body: string }> {
  const url = new URL(stack.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers: { ...headers, host, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, setCookie: res.headers['set-cookie'] ?? [], body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the session cookie is __Host- wherever it is Secure', () => {
  it('When the portal is reached over https, then the cookie is __Host- (Secure, Path=/, no Domain) and sign-out clears that name', async () => {
    const s = await portalSignIn(HTTPS);
    expect(s.set).toMatch(/^__Host-idv_portal_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/);
    expect(s.set).not.toMatch(/domain=/i);
    const status = await stack.api('GET', '/portal/session', { headers: { cookie: s.pair, ...HTTPS } });
    // expires_in: the seconds the session has left (the page warns five minutes before the end).
    expect(status.body).toEqual({ signed_in: true, csrf_token: s.csrf, expires_in: expect.any(Number) });
    expect(status.body.expires_in).toBeGreaterThan(stack.config.JWT_TTL_SECONDS - 60);
    expect(status.body.expires_in).toBeLessThanOrEqual(stack.config.JWT_TTL_SECONDS);
    expect((await me(s.pair, HTTPS)).status).toBe(200);
    const out = await stack.api('POST', '/portal/api/logout', { headers: { cookie: s.pair, 'x-csrf-token': s.csrf, ...HTTPS } });
    expect(out.status).toBe(204);
    expect(out.headers.getSetCookie()).toEqual(['__Host-idv_portal_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure']);
  });

  it('When a plain-named cookie comes over https (planted from a sibling domain), then it is no session, even holding a live token', async () => {
    const s = await portalSignIn(HTTPS);
    const planted = `${PLAIN}=${s.value}`;
    expect((await me(planted, HTTPS)).status).toBe(401);
    expect((await stack.api('GET', '/portal/session', { headers: { cookie: planted, ...HTTPS } })).body).toEqual({ signed_in: false, csrf_token: null, expires_in: null });
    // A change with it is no one's: no CSRF check passes it to the API as a session.
    const change = await stack.api('PATCH', '/portal/api/me/organisation', { json: { require_consent: false }, headers: { cookie: planted, 'x-csrf-token': s.csrf, ...HTTPS } });
    expect(change.status).toBe(401);
    // Sent beside the real one, the planted cookie changes nothing either way.
    expect((await me(`${PLAIN}=planted-by-a-sibling; ${s.pair}`, HTTPS)).status).toBe(200);
  });

  it('When the Host is not localhost, then the cookie is Secure and so __Host-, even without a forwarded protocol', async () => {
    const body = new URLSearchParams({ username: org.admin.username, password: org.admin.password }).toString();
    const r = await withHost('portal.example.com', 'POST', '/portal/api/login', { 'content-type': 'application/x-www-form-urlencoded' }, body);
    expect(r.status).toBe(200);
    expect(r.setCookie).toEqual([expect.stringMatching(/^__Host-idv_portal_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/)]);
    const pair = r.setCookie[0]!.split(';')[0]!;
    expect((await withHost('portal.example.com', 'GET', '/portal/api/me', { cookie: pair })).status).toBe(200);
    expect((await withHost('portal.example.com', 'GET', '/portal/api/me', { cookie: pair.replace(HOST, PLAIN) })).status).toBe(401);
  });

  it('When the portal is reached over plain http on localhost, then the cookie keeps its name, Path=/portal and no Secure, and a __Host- cookie is not read there', async () => {
    const s = await portalSignIn();
    expect(s.set).toMatch(/^idv_portal_session=[^;]+; Path=\/portal; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    expect((await me(s.pair)).status).toBe(200);
    expect((await me(`${HOST}=${s.value}`)).status).toBe(401);
  });
});
