import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// The portal's API bridge without a browser: `/portal/api/<path>` and `/portal/api/v1/<path>` are
// the same API path under the same session and CSRF rules, and an unknown path is the API's JSON 404.

let stack: Stack;
let org: OrgFixture;

beforeAll(async () => {
  stack = await startStack({ workers: false });
  org = await stack.createOrg();
});
afterAll(async () => stack?.close());

const SPELLINGS = ['/portal/api', '/portal/api/v1'] as const;

/** Signs in through the bridge; the cookie (Path=/portal) and the CSRF token the page would hold. */
async function portalSignIn(base: string, username = org.admin.username, password = org.admin.password) {
  const r = await stack.api('POST', `${base}/login`, { form: { username, password } });
  expect(r.status, base).toBe(200);
  expect(Object.keys(r.body).sort()).toEqual(['csrf_token', 'expires_in', 'require_password_change']);
  const set = r.headers.getSetCookie().find((c) => c.startsWith('idv_portal_session='));
  expect(set).toMatch(/; Path=\/portal; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
  return { cookie: set!.split(';')[0]!, csrf: r.body.csrf_token as string };
}

describe('/portal/api bridge', () => {
  it('When the page signs in under either spelling, then the token goes into the cookie and either spelling reads the same API path', async () => {
    for (const base of SPELLINGS) {
      const s = await portalSignIn(base);
      for (const reader of SPELLINGS) {
        const me = await stack.api('GET', `${reader}/me`, { headers: { cookie: s.cookie } });
        expect(me.status, `${base} -> ${reader}`).toBe(200);
        expect(me.body.username).toBe(org.admin.username);
        expect(me.headers.get('content-type')).toBe('application/json; charset=utf-8');
        // Not the deprecated unversioned API: neither spelling is marked.
        expect(me.headers.get('deprecation')).toBeNull();
      }
    }
  });

  it('When a bearer header is sent instead of the cookie, then both spellings drop it (401)', async () => {
    for (const base of SPELLINGS) expect((await stack.api('GET', `${base}/me`, { token: org.admin.token })).status, base).toBe(401);
  });

  it('When a change comes without the CSRF token, then both spellings refuse it; with it, both let it through', async () => {
    for (const base of SPELLINGS) {
      const s = await portalSignIn(base);
      const json = { require_consent: false };
      for (const headers of [{ cookie: s.cookie }, { cookie: s.cookie, 'x-csrf-token': 'forged' }] as Record<string, string>[]) {
        const refused = await stack.api('PATCH', `${base}/me/organisation`, { json, headers });
        expect(refused.status, base).toBe(403);
        expect(refused.body).toEqual({ detail: 'Missing or invalid CSRF token; reload the portal', code: 'csrf_failed' });
      }
      const ok = await stack.api('PATCH', `${base}/me/organisation`, { json, headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
      expect(ok.status, base).toBe(200);
    }
  });

  it('When the page signs out under either spelling, then the cookie is cleared and the session is dead under both', async () => {
    for (const base of SPELLINGS) {
      const s = await portalSignIn(base);
      const out = await stack.api('POST', `${base}/logout`, { headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
      expect(out.status, base).toBeLessThan(300);
      expect(out.headers.getSetCookie()).toContainEqual(expect.stringMatching(/^idv_portal_session=; Path=\/portal; HttpOnly; SameSite=Strict; Max-Age=0/));
      for (const reader of SPELLINGS) expect((await stack.api('GET', `${reader}/me`, { headers: { cookie: s.cookie } })).status, reader).toBe(401);
    }
  });

  it('When a path under /portal/api is unknown to the API, then the API JSON 404, never the portal page', async () => {
    const s = await portalSignIn('/portal/api');
    const paths = ['/portal/api/nope', '/portal/api/v1/nope', '/portal/api/v1/v1/me', '/portal/api/v2/me', '/portal/api', '/portal/api/', '/portal/api/v1'];
    for (const path of paths) {
      for (const method of ['GET', 'POST']) {
        const r = await stack.api(method, path, { headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
        expect(r.status, `${method} ${path}`).toBe(404);
        expect(r.headers.get('content-type'), `${method} ${path}`).toBe('application/json; charset=utf-8');
        expect(r.body, `${method} ${path}`).toEqual({ detail: 'Not Found' });
      }
    }
    // Without a session too: the API's 404, as `/v1/nope` answers.
    expect((await stack.api('GET', '/portal/api/v1/nope')).body).toEqual((await stack.api('GET', '/v1/nope')).body);
    // The page's own deep links stay the page's.
    expect((await stack.api('GET', '/portal/api-clients')).status).not.toBe(404);
  });
  it('When the sign-in path is written in another case, then the token still goes into the cookie, never the body; a cookie that is not valid percent-encoding is no session (401, not 500)', async () => {
    for (const path of ['/portal/api/LOGIN', '/portal/api/v1/Login']) {
      const r = await stack.api('POST', path, { form: { username: org.admin.username, password: org.admin.password } });
      expect(r.status, path).toBe(200);
      expect(r.body.access_token, path).toBeUndefined();
      expect(r.headers.getSetCookie().some((c) => c.startsWith('idv_portal_session=')), path).toBe(true);
    }
    const broken = await stack.api('GET', '/portal/api/me', { headers: { cookie: 'idv_portal_session=%E0' } });
    expect(broken.status).toBe(401);
  });
});
