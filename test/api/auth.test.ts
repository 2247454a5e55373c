import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUserDisabled } from '../../src/modules/organisations/organisations.service.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack({ workers: false, manualClock: new Date(), env: { LOGIN_MAX_FAILURES: '3', RATE_LIMIT_PER_TOKEN: '1000' } });
  org = await stack.createOrg({ units: 7 });
});
afterAll(async () => stack?.close());

describe('POST /login', () => {
  it('When the form is right, then a bearer token comes back as JSON with charset', async () => {
    const r = await stack.api('POST', '/v1/login', { form: { username: org.member.username, password: org.member.password } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(r.body.token_type).toBe('bearer');
    expect(typeof r.body.access_token).toBe('string');
    const claims = jwt.decode(r.body.access_token) as jwt.JwtPayload;
    expect(claims.exp! - claims.iat!).toBe(3600);
    expect(jwt.decode(r.body.access_token, { complete: true })!.header.alg).toBe('HS256');
  });

  it('When the credentials come as JSON, then 415', async () => {
    const r = await stack.api('POST', '/v1/login', { json: { username: org.member.username, password: org.member.password } });
    expect(r.status).toBe(415);
    expect(r.body.detail).toMatch(/x-www-form-urlencoded/);
  });

  it('When the password is missing, then 400 invalid_request naming the field', async () => {
    const r = await stack.api('POST', '/v1/login', { form: { username: org.member.username } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ detail: 'Field required: password', error: 'invalid_request', error_description: 'Field required: password' });
  });

  it('When grant_type is neither password nor client_credentials, then 400', async () => {
    const r = await stack.api('POST', '/v1/login', { form: { username: org.member.username, password: org.member.password, grant_type: 'authorization_code' } });
    expect(r.status).toBe(400);
  });

  it('When the user is unknown or the password wrong, then the same 401 detail', async () => {
    const unknown = await stack.api('POST', '/v1/login', { form: { username: 'nobody-here', password: 'whatever1' } });
    const wrong = await stack.api('POST', '/v1/login', { form: { username: org.admin.username, password: 'not-the-password' } });
    expect(unknown.status).toBe(401);
    expect(wrong.status).toBe(401);
    expect(unknown.body).toEqual(wrong.body);
    expect(unknown.body.detail).toBe('Incorrect username or password');
  });

  it('When a username keeps failing, then logins are refused with 429 and Retry-After, even with the right password', async () => {
    const victim = await stack.createOrg();
    for (let i = 0; i < 3; i++) {
      const r = await stack.api('POST', '/login', { form: { username: victim.member.username, password: 'wrong-password' } });
      expect(r.status).toBe(401);
    }
    const locked = await stack.api('POST', '/login', { form: { username: victim.member.username, password: victim.member.password } });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(locked.body.detail).toBeTruthy();
  });
});

describe('tokens', () => {
  it('When no token is sent, then 401 with WWW-Authenticate', async () => {
    const r = await stack.api('GET', '/v1/me');
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toBe('Bearer');
    expect(r.body.detail).toBe('Not authenticated');
  });

  it('When the token is tampered with, unsigned, signed with another key or another algorithm, then 401', async () => {
    const [h, p, s] = org.member.token.split('.');
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const elevated = Buffer.from(JSON.stringify({ ...payload, role: 'org_admin' })).toString('base64url');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${p}.`;
    const otherKey = jwt.sign(payload, 'another-secret-another-secret-another-secret', { algorithm: 'HS256' });
    const hs512 = jwt.sign(payload, stack.config.JWT_SECRET, { algorithm: 'HS512' });
    for (const token of [`${h}.${elevated}.${s}`, none, otherKey, hs512, 'garbage', `${h}.${p}`]) {
      const r = await stack.api('GET', '/v1/me', { token });
      expect(r.status, token).toBe(401);
      expect(typeof r.body.detail).toBe('string');
    }
  });

  it('When 59 minutes have passed, then the token works; after 60 it has expired', async () => {
    const fresh = await stack.login(org.admin.username, org.admin.password);
    stack.clock.advance!(59 * 60 * 1000);
    expect((await stack.api('GET', '/v1/me', { token: fresh })).status).toBe(200);
    stack.clock.advance!(61 * 1000);
    const expired = await stack.api('GET', '/v1/me', { token: fresh });
    expect(expired.status).toBe(401);
    expect(expired.body.detail).toBe('Token has expired');
    stack.clock.set!(new Date());
  });

  it('When a token is not yet valid, then 401', async () => {
    const payload = jwt.decode(org.member.token) as jwt.JwtPayload;
    const future = Math.floor(Date.now() / 1000) + 3600;
    const token = jwt.sign({ ...payload, iat: future, nbf: future, exp: future + 3600 }, stack.config.JWT_SECRET, { algorithm: 'HS256' });
    expect((await stack.api('GET', '/v1/me', { token })).status).toBe(401);
  });

  it('When the user is disabled, then their still-valid token gets 401', async () => {
    const o = await stack.createOrg();
    expect((await stack.api('GET', '/v1/me', { token: o.member.token })).status).toBe(200);
    await setUserDisabled(stack.db, { username: o.member.username }, true);
    expect((await stack.api('GET', '/v1/me', { token: o.member.token })).status).toBe(401);
    const again = await stack.api('POST', '/v1/login', { form: { username: o.member.username, password: o.member.password } });
    expect(again.status).toBe(401);
  });
});

describe('GET /me', () => {
  it('When an administrator asks, then the unit balance, tenancy and badge are shown', async () => {
    const r = await stack.api('GET', '/v1/me', { token: org.admin.token });
    expect(r.status).toBe(200);
    expect(r.body.role).toBe('org_admin');
    expect(r.body.organisation).toMatchObject({ id: org.orgId, org_number: org.orgId, units: 7, tenancy: 'hosted', loyalty_badge: null });
  });

  it('When a team member asks, then the organisation is shown with its balance and without the rest of the wallet', async () => {
    const r = await stack.api('GET', '/v1/me', { token: org.member.token });
    expect(r.status).toBe(200);
    expect(r.body.role).toBe('member');
    expect(r.body.organisation.id).toBe(org.orgId);
    expect(r.body.organisation.units).toBe(7);
    expect(r.body.organisation.unit_cost).toBeUndefined();
  });

  it('When the alias /meorganisation or the unversioned path is used, then the answer is the same', async () => {
    const a = await stack.api('GET', '/v1/me', { token: org.admin.token });
    for (const path of ['/me', '/v1/meorganisation', '/meorganisation']) {
      const b = await stack.api('GET', path, { token: org.admin.token });
      expect(b.status).toBe(200);
      expect(b.body).toEqual(a.body);
    }
  });
});
