import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack({ workers: false, env: { CORS_ALLOWED_ORIGINS: 'https://console.operator.example', RATE_LIMIT_PER_TOKEN: '5' } });
  org = await stack.createOrg();
});
afterAll(async () => stack?.close());

describe('HTTP conventions', () => {
  it('When a route does not exist, then 404 with a JSON detail', async () => {
    for (const path of ['/v1/nothing-here', '/nothing', '/v2/me']) {
      const r = await stack.api('GET', path);
      expect(r.status).toBe(404);
      expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(r.body).toEqual({ detail: 'Not Found' });
    }
  });

  it("When a response is sent, then helmet's headers and a request id come with it", async () => {
    const r = await stack.api('GET', '/healthz', { headers: { 'x-request-id': 'caller-request-0001' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('strict-transport-security')).toBeTruthy();
    expect(r.headers.get('x-request-id')).toBe('caller-request-0001');
    expect(r.headers.get('x-powered-by')).toBeNull();
  });

  it('When PostgreSQL and Redis are reachable, then /readyz is 200', async () => {
    const r = await stack.api('GET', '/readyz');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ postgres: 'ok', redis: 'ok' });
    // This stack runs no face worker; that does not make it unready.
    expect(r.body.face).toBe('no_worker');
  });

  it('When a browser origin outside the allow-list calls, then 403 without CORS headers (preflight too)', async () => {
    const r = await stack.api('GET', '/v1/me', { token: org.admin.token, headers: { origin: 'https://evil.example' } });
    expect(r.status).toBe(403);
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    expect(r.body.detail).toMatch(/Cross-origin/);
    const pre = await stack.api('OPTIONS', '/v1/verify-nin', {
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
    });
    expect(pre.status).toBe(403);
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    const login = await stack.api('POST', '/v1/login', { form: { username: org.admin.username, password: org.admin.password }, headers: { origin: 'https://evil.example' } });
    expect(login.status).toBe(403);
  });

  it("When the operator's own origin calls, then CORS headers allow it", async () => {
    const pre = await stack.api('OPTIONS', '/v1/me', { headers: { origin: 'https://console.operator.example', 'access-control-request-method': 'GET' } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('https://console.operator.example');
    const r = await stack.api('GET', '/v1/me', { token: org.admin.token, headers: { origin: 'https://console.operator.example' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBe('https://console.operator.example');
  });

  it('When a token goes over its rate limit, then 429 with Retry-After and a detail', async () => {
    const o = await stack.createOrg();
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await stack.api('GET', '/v1/me', { token: o.member.token })).status);
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.slice(5)).toEqual([429, 429]);
    const r = await stack.api('GET', '/me', { token: o.member.token });
    expect(r.status).toBe(429);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(r.body.detail).toMatch(/Too many requests/);
  });
});
