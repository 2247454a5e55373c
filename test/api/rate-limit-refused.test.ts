import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// The deny-list and the rate-limit counters are one Redis call, made once the principal is admitted:
// a request refused for its principal or its token counts against no limit, so a leaked token (used
// from outside its client's addresses, or after its user was disabled) cannot use up its
// organisation's requests. Read straight from the counters the limiter keeps.

let stack: Stack;
let redis: Redis;
const from = (address: string) => ({ 'x-forwarded-for': address });

beforeAll(async () => {
  stack = await startStack({ workers: false, env: { TRUST_PROXY: 'loopback' } });
  redis = new Redis(stack.config.REDIS_URL);
});

afterAll(async () => {
  redis?.disconnect();
  await stack?.close();
});

const orgCount = async (org: OrgFixture) => Number((await redis.get(`${stack.config.REDIS_PREFIX}:rl:org:${org.orgId}`)) ?? 0);

/** A found fixture verification of the organisation's, to requery. */
async function reference(org: OrgFixture): Promise<string> {
  const r = await stack.api('POST', '/v1/verify-nin', { token: org.admin.token, json: { nin: '12345678901', reason: 'corporate' } });
  expect(r.status).toBe(200);
  return r.body.data.reference_id as string;
}

describe('Refused requests and the rate limits', () => {
  it("When a disabled member's token and a logged-out token keep calling, then every call is refused (401) and the organisation's counter does not move; an admitted call moves it by one", async () => {
    const org = await stack.createOrg({ units: 5 });
    const ref = await reference(org);
    const team = await stack.api('GET', '/v1/team', { token: org.admin.token });
    const memberId = team.body.data.find((u: { username: string }) => u.username === org.member.username).id;
    expect((await stack.api('PATCH', `/v1/team/${memberId}`, { token: org.admin.token, json: { disabled: true } })).status).toBe(200);
    const loggedOut = await stack.login(org.admin.username, org.admin.password);
    expect((await stack.api('POST', '/v1/logout', { token: loggedOut })).status).toBe(204);

    const before = await orgCount(org);
    for (const token of [org.member.token, loggedOut]) {
      for (let i = 0; i < 5; i++) {
        expect((await stack.api('GET', '/v1/me', { token })).status).toBe(401);
        expect((await stack.api('POST', '/v1/verify-nin/requery', { token, json: { reference_id: ref } })).status).toBe(401);
      }
    }
    expect(await orgCount(org)).toBe(before);
    expect((await stack.api('POST', '/v1/verify-nin/requery', { token: org.admin.token, json: { reference_id: ref } })).status).toBe(200);
    expect(await orgCount(org)).toBe(before + 1);
  });

  it("When an API client's token is used from outside its addresses, then every call is refused (403) and the organisation's counter does not move", async () => {
    const org = await stack.createOrg({ units: 5 });
    const ref = await reference(org);
    const made = await stack.api('POST', '/v1/api-clients', { token: org.admin.token, json: { name: 'Fenced', role: 'member', allowed_ips: ['203.0.113.0/24'] } });
    expect(made.status).toBe(201);
    const grant = await stack.api('POST', '/v1/login', { form: { grant_type: 'client_credentials', client_id: made.body.client_id, client_secret: made.body.client_secret }, headers: from('203.0.113.9') });
    expect(grant.status).toBe(200);
    const token = grant.body.access_token as string;

    const before = await orgCount(org);
    for (let i = 0; i < 5; i++) {
      expect((await stack.api('GET', '/v1/me', { token, headers: from('198.51.100.7') })).status).toBe(403);
      expect((await stack.api('POST', '/v1/verify-nin/requery', { token, json: { reference_id: ref }, headers: from('198.51.100.7') })).status).toBe(403);
    }
    expect(await orgCount(org)).toBe(before);
    expect((await stack.api('POST', '/v1/verify-nin/requery', { token, json: { reference_id: ref }, headers: from('203.0.113.20') })).status).toBe(200);
    expect(await orgCount(org)).toBe(before + 1);
  });
});
