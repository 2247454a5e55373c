import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDPOINT_SCOPES } from '../../src/modules/auth/endpoint-scopes.ts';
import { buildOpenApiDocument } from '../../src/api-document/document.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

let stack: Stack;
let org: OrgFixture;

// TRUST_PROXY=loopback: the test talks from 127.0.0.1 and names the client address in X-Forwarded-For,
// the way a load balancer would.
beforeAll(async () => {
  stack = await startStack({ workers: false, manualClock: new Date(), env: { TRUST_PROXY: 'loopback', RATE_LIMIT_PER_TOKEN: '1000' } });
  org = await stack.createOrg({ units: 20 });
});
afterAll(async () => stack?.close());

const from = (address: string) => ({ 'x-forwarded-for': address });
const create = (json: unknown) => stack.api('POST', '/v1/api-clients', { token: org.admin.token, json });
const grant = (c: { client_id: string; client_secret: string }, address = '127.0.0.1') =>
  stack.api('POST', '/v1/login', { form: { grant_type: 'client_credentials', client_id: c.client_id, client_secret: c.client_secret }, headers: from(address) });
async function tokenOf(c: { client_id: string; client_secret: string }, address = '127.0.0.1'): Promise<string> {
  const r = await grant(c, address);
  expect(r.status).toBe(200);
  return r.body.access_token as string;
}
const lacks = (scope: string) => ({ detail: `This API client lacks the scope ${scope}`, code: 'insufficient_scope' });

describe('Scoped, address-restricted, expiring API clients', () => {
  it('When no scopes are given, then the client gets what its role allows, and the list shows scopes, allowed_ips and expires_at', async () => {
    const member = await create({ name: 'Member default', role: 'member' });
    const admin = await create({ name: 'Admin default', role: 'org_admin' });
    expect(member.status).toBe(201);
    expect(member.body).toMatchObject({ scopes: ['verify', 'requery', 'history:read'], allowed_ips: [], expires_at: null });
    expect(admin.body.scopes).toEqual(['verify', 'requery', 'history:read', 'topup', 'webhooks', 'links']);
    const expiresAt = new Date(stack.clock.now().getTime() + 86_400_000).toISOString();
    const narrow = await create({ name: 'Narrow', role: 'member', scopes: ['verify'], allowed_ips: ['203.0.113.0/24', '2001:DB8::1'], expires_at: expiresAt });
    expect(narrow.status).toBe(201);
    const list = await stack.api('GET', '/v1/api-clients', { token: org.admin.token });
    expect(list.body.data.find((c: { client_id: string }) => c.client_id === narrow.body.client_id)).toMatchObject({
      scopes: ['verify'],
      allowed_ips: ['203.0.113.0/24', '2001:db8::1'],
      expires_at: expiresAt,
    });
  });

  it('When a scope is beyond the role or unknown, an address is malformed, or expires_at is not in the future, then 400 naming the field', async () => {
    const cases: [unknown, RegExp][] = [
      [{ name: 'x', role: 'member', scopes: ['topup'] }, /^scopes: the scope topup is beyond the member role$/],
      [{ name: 'x', role: 'org_admin', scopes: ['team'] }, /^scopes: unknown scope "team"/],
      [{ name: 'x', role: 'member', scopes: [] }, /^scopes: /],
      [{ name: 'x', role: 'member', allowed_ips: ['10.0.0.0/33'] }, /^allowed_ips: "10.0.0.0\/33" is not an IP address or CIDR range$/],
      [{ name: 'x', role: 'member', allowed_ips: ['example.com'] }, /^allowed_ips: /],
      [{ name: 'x', role: 'member', expires_at: new Date(stack.clock.now().getTime() - 1000).toISOString() }, /^expires_at must be in the future$/],
      [{ name: 'x', role: 'member', expires_at: 'tomorrow' }, /^expires_at: must be an ISO 8601 date-time with a zone/],
    ];
    for (const [body, detail] of cases) {
      const r = await create(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.detail).toMatch(detail);
    }
  });

  it('When a client calls an endpoint outside its scopes, then 403 insufficient_scope naming the scope; inside them it works', async () => {
    const verifier = (await create({ name: 'Verifier', role: 'org_admin', scopes: ['verify'] })).body;
    const token = await tokenOf(verifier);
    expect((await stack.api('POST', '/v1/verify-nin', { token, json: { nin: '12345678901', reason: 'corporate' } })).status).toBe(200);
    expect((await stack.api('GET', '/v1/me', { token })).status).toBe(200);
    const refusals: [string, string, unknown, string][] = [
      ['POST', '/v1/verify-nin/requery', { reference_id: 'REF-AAAAAAAAAAAA' }, 'requery'],
      ['GET', '/v1/verify-nin/slip/REF-AAAAAAAAAAAA', undefined, 'requery'],
      ['GET', '/v1/verifications', undefined, 'history:read'],
      ['GET', '/v1/transactions', undefined, 'history:read'],
      ['GET', '/v1/topups', undefined, 'history:read'],
    ];
    for (const [method, path, json, scope] of refusals) {
      const r = await stack.api(method, path, { token, json });
      expect(r.status, path).toBe(403);
      expect(r.body).toEqual(lacks(scope));
    }
    const topup = await stack.api('POST', '/v1/topup/initialize', { token, form: { units: 100 } });
    expect(topup.status).toBe(403);
    expect(topup.body).toEqual(lacks('topup'));

    const reader = (await create({ name: 'Reader', role: 'org_admin', scopes: ['history:read'] })).body;
    const readerToken = await tokenOf(reader);
    for (const path of ['/v1/verifications', '/v1/transactions', '/v1/topups', '/verifications']) {
      expect((await stack.api('GET', path, { token: readerToken })).status, path).toBe(200);
    }
    const verify = await stack.api('POST', '/v1/verify-nin', { token: readerToken, json: { nin: '12345678901', reason: 'corporate' } });
    expect(verify.status).toBe(403);
    expect(verify.body).toEqual(lacks('verify'));
    // The team stays closed to clients whatever their scopes.
    expect((await stack.api('GET', '/v1/team', { token })).status).toBe(403);
  });

  it('When a client created before scopes existed (no stored scopes) signs in, then its token has all its role allows', async () => {
    const legacy = (await create({ name: 'Legacy admin', role: 'org_admin', scopes: ['verify'] })).body;
    await stack.db.query(sql.unsafe`UPDATE api_clients SET scopes = NULL WHERE client_id = ${legacy.client_id}`);
    const token = await tokenOf(legacy);
    expect((await stack.api('GET', '/v1/topups', { token })).status).toBe(200);
    const list = await stack.api('GET', '/v1/api-clients', { token: org.admin.token });
    expect(list.body.data.find((c: { client_id: string }) => c.client_id === legacy.client_id).scopes).toEqual(['verify', 'requery', 'history:read', 'topup', 'webhooks', 'links']);
  });

  it('When a client is used from an address outside allowed_ips, then 401 at the token grant and 403 on use; IPv4 ranges and IPv6 addresses match', async () => {
    const c = (await create({ name: 'Fenced', role: 'member', allowed_ips: ['203.0.113.0/24', '2001:db8::/32'] })).body;
    const outside = await grant(c, '198.51.100.7');
    expect(outside.status).toBe(401);
    expect(outside.body).toMatchObject({ detail: 'This API client may not be used from this address', error: 'invalid_client' });
    expect(outside.headers.get('www-authenticate')).toMatch(/^Basic /);
    const token = await tokenOf(c, '203.0.113.9');
    expect((await stack.api('GET', '/v1/me', { token, headers: from('203.0.113.200') })).status).toBe(200);
    expect((await stack.api('GET', '/v1/me', { token, headers: from('2001:db8:ffff::1') })).status).toBe(200);
    for (const address of ['198.51.100.7', '2001:db9::1', '127.0.0.1']) {
      const r = await stack.api('GET', '/v1/me', { token, headers: from(address) });
      expect(r.status, address).toBe(403);
      expect(r.body).toEqual({ detail: 'This API client may not be used from this address', code: 'address_not_allowed' });
      // The requery reads the principal in its row's statement: the same refusal, the same words.
      const rq = await stack.api('POST', '/v1/verify-nin/requery', { token, json: { reference_id: 'REF-AAAAAAAAAAAA' }, headers: from(address) });
      expect(rq.status, address).toBe(403);
      expect(rq.body).toEqual({ detail: 'This API client may not be used from this address', code: 'address_not_allowed' });
    }
    const inside = await stack.api('POST', '/v1/verify-nin/requery', { token, json: { reference_id: 'REF-AAAAAAAAAAAA' }, headers: from('2001:db8:ffff::1') });
    expect(inside.status).toBe(404);
    expect(inside.body).toEqual({ detail: 'Unknown reference_id' });
    // A wrong secret from a fenced address still says only that the credentials are wrong.
    expect((await grant({ client_id: c.client_id, client_secret: 'wrong' }, '198.51.100.7')).body).toMatchObject({ detail: 'Incorrect client credentials' });
  });

  it('When the expiry passes, then the client cannot get a token (401) and its live token answers 401 at once', async () => {
    const expiresAt = new Date(stack.clock.now().getTime() + 10 * 60_000);
    const c = (await create({ name: 'Short-lived', role: 'member', expires_at: expiresAt.toISOString() })).body;
    const token = await tokenOf(c);
    expect((await stack.api('GET', '/v1/me', { token })).status).toBe(200);
    stack.clock.advance!(11 * 60_000);
    const use = await stack.api('GET', '/v1/me', { token });
    expect(use.status).toBe(401);
    expect(use.body).toMatchObject({ detail: 'This API client has expired' });
    const requery = await stack.api('POST', '/v1/verify-nin/requery', { token, json: { reference_id: 'REF-AAAAAAAAAAAA' } });
    expect(requery.status).toBe(401);
    expect(requery.body).toMatchObject({ detail: 'This API client has expired' });
    const again = await grant(c);
    expect(again.status).toBe(401);
    expect(again.body).toMatchObject({ detail: 'This API client has expired', error: 'invalid_client' });
    expect(again.headers.get('www-authenticate')).toMatch(/^Basic /);
  });

  it('When the OpenAPI document lists the endpoints that take a bearer token, then each has a row in the scope table (none is closed to clients by accident)', () => {
    const doc = buildOpenApiDocument();
    const bearerOps = Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
      Object.entries(item as Record<string, { security?: Record<string, unknown>[] }>)
        .filter(([method, op]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method) && (op.security ?? []).some((s) => 'bearerAuth' in s))
        .map(([method]) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
    );
    const operatorOnly = new Set(['GET /metrics']);
    const unmapped = bearerOps.filter((op) => !operatorOnly.has(op) && !Object.hasOwn(ENDPOINT_SCOPES, op));
    expect(bearerOps.length).toBeGreaterThan(20);
    expect(unmapped).toEqual([]);
  });
});
