import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIdentitySimulator, type IdentitySimulator } from '../../src/simulators/identity-authority/server.ts';

/** The simulator's vNINs as its README describes them: issued without a key, checked like NIMC, in every dialect. */
const KEY = 'sim-key';
let sim: IdentitySimulator;
beforeAll(async () => {
  sim = await startIdentitySimulator({ port: 0, apiKey: KEY, enterpriseCode: '123456' });
});
afterAll(async () => sim.close());

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${sim.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const issue = async (body: Record<string, unknown>) => {
  const res = await post('/sandbox/vnin', body);
  return { status: res.status, body: (await res.json()) as { vnin: string; expires_at: string; message?: string } };
};

describe('identity simulator vNINs', () => {
  it('When a person makes a vNIN, then 201 with a token of two letters, 12 digits, two letters and its expiry 72 h on, without any key and uncounted', async () => {
    const calls = sim.stats().calls;
    const issuedAt = '2026-11-20T10:00:00.000Z';
    const made = await issue({ nin: '31415926535', enterprise_code: '123456', issued_at: issuedAt });
    expect(made.status).toBe(201);
    expect(made.body.vnin).toMatch(/^[A-Z]{2}\d{12}[A-Z]{2}$/);
    expect(made.body.expires_at).toBe('2026-11-23T10:00:00.000Z');
    expect(sim.stats().calls).toBe(calls);
    for (const bad of [{ nin: '3141592653', enterprise_code: '123456' }, { nin: '31415926535' }, { nin: '31415926535', enterprise_code: '123456', issued_at: 'yesterday' }]) {
      const res = await issue(bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.message).not.toContain('31415926535');
    }
    expect((await issue({ nin: '01234567890', enterprise_code: '123456' })).status).toBe(404);
  });

  it('When a token is looked up, then it is found once and used after, in the sandbox, Prembly and Dojah dialects alike', async () => {
    const auth = { authorization: `Bearer ${KEY}` };
    const sandbox = (await issue({ nin: '31415926535', enterprise_code: '123456' })).body.vnin;
    const first = await post('/v1/vnin', { vnin: sandbox, reason: 'corporate' }, auth);
    expect(first.status).toBe(200);
    expect(((await first.json()) as { data: Record<string, unknown> }).data.nin).toBe('31415926535');
    const second = await post('/v1/vnin', { vnin: sandbox, reason: 'corporate' }, auth);
    expect([second.status, await second.json()]).toEqual([404, { status: false, message: 'vNIN already used' }]);
    expect((await post('/v1/vnin', { vnin: sandbox, reason: 'corporate' })).status).toBe(401);

    const prembly = (await issue({ nin: '27182818284', enterprise_code: '123456' })).body.vnin;
    const p1 = await post('/identitypass/verification/vnin', { number: prembly }, { 'x-api-key': KEY });
    expect(((await p1.json()) as { response_code: string }).response_code).toBe('00');
    const p2 = await post('/identitypass/verification/vnin', { number: prembly }, { 'x-api-key': KEY });
    expect([p2.status, await p2.json()]).toEqual([200, expect.objectContaining({ status: false, response_code: '01', detail: 'Virtual NIN has already been used' })]);

    const dojah = (await issue({ nin: '16180339887', enterprise_code: '654321' })).body.vnin;
    const d = await fetch(`${sim.url}/api/v1/kyc/vnin?vnin=${dojah}`, { headers: { authorization: KEY } });
    expect([d.status, await d.json()]).toEqual([404, { error: 'vnin issued for another enterprise' }]);
    const expired = (await issue({ nin: '16180339887', enterprise_code: '123456', issued_at: new Date(Date.now() - 72 * 3600 * 1000).toISOString() })).body.vnin;
    const e = await fetch(`${sim.url}/api/v1/kyc/vnin?vnin=${expired}`, { headers: { authorization: KEY } });
    expect([e.status, await e.json()]).toEqual([404, { error: 'vnin expired' }]);
    const u = await fetch(`${sim.url}/api/v1/kyc/vnin?vnin=QQ000000000000QQ`, { headers: { authorization: KEY } });
    expect([u.status, await u.json()]).toEqual([404, { error: 'vnin not found' }]);
  });
});
