import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisGate, redisGiveBack } from '../../src/modules/auth/index.ts';
import { countedCode } from '../../src/modules/mfa/code-attempts.ts';
import { startStack, type Stack } from '../setup/harness.ts';

// A count taken before a request is judged and given back when the request is refused (the
// requery's rate limits) or the code was right (the one-time code count) is given back to the
// window it was taken in, named by identity: once that window has ended, the new window keeps its
// count. The window is ended here by the event itself (the key expires), never by waiting a margin.

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

/** Ends the keys' windows now: each expires, and is gone before this returns. */
async function endWindows(...keys: string[]): Promise<void> {
  for (const k of keys) expect(await redis.pexpire(k, 1)).toBe(1);
  while ((await redis.exists(...keys)) > 0) await new Promise((r) => setTimeout(r, 2));
}

const count = async (key: string) => Number((await redis.get(key)) ?? 0);

describe('counts given back by window, not by time', () => {
  const prefix = `i30-gb-${randomBytes(4).toString('hex')}`;
  const keys = { revoked: (jti: string) => `${prefix}:auth:revoked:${jti}`, token: (jti: string) => `${prefix}:rl:token:${jti}`, org: (orgId: number) => `${prefix}:rl:org:${orgId}` };
  const counted = async (jti: string, orgId: number) => {
    const r = await redisGate(redis, keys, 60)!(jti, orgId, true);
    if (r.revoked || !r.counted) throw new Error('expected counts');
    return r.counted;
  };

  it('when the requery gate gives back a count in the window it took it in, then both counters go down by one; after that window ended and a new one opened, a late give-back leaves the new window its count', async () => {
    const giveBack = redisGiveBack(redis, keys)!;
    await counted('jti-a', 1);
    const second = await counted('jti-a', 1);
    expect([second.token.consumed, second.org?.consumed]).toEqual([2, 2]);
    await giveBack('jti-a', 1, second);
    expect([await count(keys.token('jti-a')), await count(keys.org(1))]).toEqual([1, 1]);

    await endWindows(keys.token('jti-a'), keys.org(1));
    const third = await counted('jti-a', 1);
    expect([third.token.consumed, third.org?.consumed]).toEqual([1, 1]);
    expect(third.token.window).not.toBe(second.token.window);
    await giveBack('jti-a', 1, second);
    expect([await count(keys.token('jti-a')), await count(keys.org(1))]).toEqual([1, 1]);
    // The count the new window took is still its own to give back.
    await giveBack('jti-a', 1, third);
    expect([await count(keys.token('jti-a')), await count(keys.org(1))]).toEqual([0, 0]);
  });

  const codes = () => ({ db: stack.db, redis, config: { REDIS_PREFIX: `${prefix}-mfa-${randomBytes(3).toString('hex')}` } });
  const who = { userId: 4242, orgId: null };
  const codeKey = (deps: ReturnType<typeof codes>) => `${deps.config.REDIS_PREFIX}:mfa:codes:${who.userId}`;

  it("when a right one-time code is checked in the window its point was taken in, then the point is given back (a wrong one keeps its point); when that window ends during the check and a wrong code opens a new one, then the right code's give-back leaves the new window's failure counted", async () => {
    const deps = codes();
    expect(await countedCode(deps, who, async () => false)).toBe(false);
    expect(await count(codeKey(deps))).toBe(1);
    expect(await countedCode(deps, who, async () => true)).toBe(true);
    expect(await count(codeKey(deps))).toBe(1);

    const right = await countedCode(deps, who, async () => {
      await endWindows(codeKey(deps));
      expect(await countedCode(deps, who, async () => false)).toBe(false);
      expect(await count(codeKey(deps))).toBe(1);
      return true;
    });
    expect(right).toBe(true);
    expect(await count(codeKey(deps))).toBe(1);
  });
});
