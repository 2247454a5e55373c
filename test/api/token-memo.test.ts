import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tokenMemo } from '../../src/modules/auth/token-memo.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// A token whose signature was verified once is not verified again in that process (its verdict is
// remembered by its exact text); everything else about it is still checked on every request.

let stack: Stack;
let org: OrgFixture;
const start = new Date('2026-11-26T12:00:00Z');

beforeAll(async () => {
  stack = await startStack({ workers: false, manualClock: start });
  org = await stack.createOrg({ units: 5 });
});
afterAll(async () => stack?.close());

const verifiedWith = (spy: { mock: { calls: unknown[][] } }, token: string) => spy.mock.calls.filter((c) => c[0] === token).length;

describe('Remembered token signatures', () => {
  it('When one token calls three times, then its signature is verified once, and a copy with one character changed is still refused', async () => {
    const token = await stack.login(org.member.username, org.member.password);
    const spy = vi.spyOn(jwt, 'verify');
    try {
      for (let i = 0; i < 3; i++) expect((await stack.api('GET', '/v1/me', { token })).status).toBe(200);
      expect((await stack.api('POST', '/v1/verify-nin/requery', { token, json: { reference_id: 'REF-AAAAAAAAAAAA' } })).status).toBe(404);
      expect(verifiedWith(spy, token)).toBe(1);
      const [h, p, s] = token.split('.') as [string, string, string];
      const tampered = `${h}.${p}.${s.slice(0, -2)}${s.endsWith('AA') ? 'BB' : 'AA'}`;
      expect((await stack.api('GET', '/v1/me', { token: tampered })).status).toBe(401);
      expect((await stack.api('GET', '/v1/me', { token: tampered })).status).toBe(401);
      expect(verifiedWith(spy, tampered)).toBe(2);
    } finally {
      spy.mockRestore();
    }
  });

  it('When a remembered token expires on the app clock, then it is refused (401) on every kind of route', async () => {
    const token = await stack.login(org.member.username, org.member.password);
    expect((await stack.api('GET', '/v1/me', { token })).status).toBe(200);
    expect((await stack.api('POST', '/v1/verify-nin/requery', { token, json: { reference_id: 'REF-AAAAAAAAAAAA' } })).status).toBe(404);
    stack.clock.advance!(61 * 60 * 1000);
    try {
      expect((await stack.api('GET', '/v1/me', { token })).status).toBe(401);
      expect((await stack.api('POST', '/v1/verify-nin/requery', { token, json: { reference_id: 'REF-AAAAAAAAAAAA' } })).status).toBe(401);
    } finally {
      stack.clock.set!(start);
    }
  });

  it('When the memo is full, then the least recently used verdict goes, and only objects are kept', () => {
    const memo = tokenMemo({ max: 2, ttlSeconds: 3600 });
    memo.remember('a', { sub: '1' });
    memo.remember('b', { sub: '2' });
    expect(memo.get('a')).toEqual({ sub: '1' });
    memo.remember('c', { sub: '3' });
    expect([memo.get('a'), memo.get('b'), memo.get('c')]).toEqual([{ sub: '1' }, undefined, { sub: '3' }]);
    memo.remember('d', 'not an object');
    memo.remember(null, { sub: '4' });
    expect([memo.get('d'), memo.get(null)]).toEqual([undefined, undefined]);
    expect(Object.isFrozen(memo.get('a'))).toBe(true);
  });
});
