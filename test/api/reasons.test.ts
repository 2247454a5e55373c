import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../setup/harness.ts';

const SIM_KEYS = ['corporate', 'nyscCheck', 'telecommunicationSimReg', 'bankAccountOpening', 'employmentScreening'];

let stack: Stack;
let redis: Redis;
beforeAll(async () => {
  stack = await startStack({ workers: false });
  redis = new Redis(stack.config.REDIS_URL);
});
afterAll(async () => {
  redis?.disconnect();
  await stack?.close();
});

describe('GET /nimc-reasons', () => {
  it('When a member asks for the reasons, then the upstream list comes back as {key, label, description}', async () => {
    const org = await stack.createOrg();
    const res = await stack.api('GET', '/v1/nimc-reasons', { token: org.member.token });
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { key: string }) => r.key)).toEqual(SIM_KEYS);
    for (const r of res.body.data) {
      expect(Object.keys(r).sort()).toEqual(['description', 'key', 'label']);
      expect(typeof r.label).toBe('string');
    }
  });

  it('When the alias or the unversioned path is used, then the same list comes back', async () => {
    const org = await stack.createOrg();
    const a = await stack.api('GET', '/v1/nimc-reasons', { token: org.member.token });
    for (const path of ['/v1/upstream-reasons', '/nimc-reasons', '/upstream-reasons']) {
      const b = await stack.api('GET', path, { token: org.member.token });
      expect(b.status, path).toBe(200);
      expect(b.body).toEqual(a.body);
    }
  });

  it('When the list was fetched once, then it is cached in Redis under the prefix and later calls do not go upstream', async () => {
    const org = await stack.createOrg();
    await stack.api('GET', '/v1/nimc-reasons', { token: org.member.token });
    const key = `${stack.config.REDIS_PREFIX}:cache:reasons`;
    expect(JSON.parse((await redis.get(key))!).map((r: { key: string }) => r.key)).toEqual(SIM_KEYS);
    const ttl = await redis.ttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(stack.config.REASONS_CACHE_SECONDS);
    const calls = stack.identitySim.stats().calls;
    for (let i = 0; i < 5; i++) await stack.api('GET', '/v1/upstream-reasons', { token: org.member.token });
    expect(stack.identitySim.stats().calls).toBe(calls);
  });

  it('When there is no token, then 401', async () => {
    expect((await stack.api('GET', '/v1/nimc-reasons')).status).toBe(401);
  });
});

describe('reason validation on verification calls', () => {
  it('When a reason is a label, a wrong-case key or unknown, then 400; a key from the list is accepted', async () => {
    const org = await stack.createOrg({ units: 0, subscription: false });
    for (const reason of ['Corporate', 'NYSC check', 'CORPORATE', 'nope']) {
      const res = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '12345678901', reason } });
      expect(res.status, reason).toBe(400);
      expect(res.body.detail).toMatch(/Invalid reason/);
    }
    // A key the upstream lists beyond the three built-in ones.
    const ok = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '12345678901', reason: 'bankAccountOpening' } });
    expect(ok.status).toBe(200);
  });

  it('When demography is asked with another reason than nyscCheck, then 400', async () => {
    const org = await stack.createOrg({ units: 1 });
    const res = await stack.api('POST', '/v1/verify-nin/demography', {
      token: org.member.token,
      json: { first_name: 'Ada', last_name: 'Okafor', date_of_birth: '14-03-1991', gender: 'f', reason: 'corporate' },
    });
    expect(res.status).toBe(400);
  });
});

describe('when the upstream reasons list is unavailable', () => {
  let down: Stack;
  beforeAll(async () => {
    // An identity base URL nobody listens on: the reasons call fails at once.
    down = await startStack({ workers: false, env: { IDENTITY_BASE_URL: 'http://127.0.0.1:9', IDENTITY_TIMEOUT_MS: '300' } });
  });
  afterAll(async () => down?.close());

  it('When the upstream cannot be reached, then the three built-in reasons are still listed and accepted', async () => {
    const org = await down.createOrg({ units: 0 });
    const res = await down.api('GET', '/v1/nimc-reasons', { token: org.member.token });
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { key: string }) => r.key)).toEqual(['corporate', 'nyscCheck', 'telecommunicationSimReg']);
    const fixture = await down.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '12345678902', reason: 'nyscCheck' } });
    expect(fixture.status).toBe(200);
  });
});
