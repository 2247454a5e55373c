import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createCallSpacer, SpacingBacklogError } from '../../src/lib/call-spacing.ts';

// Two connections stand for two worker processes sharing one limit.
let a: Redis;
let b: Redis;
const prefix = `${inject('runId')}-spacing-${randomBytes(3).toString('hex')}`;

beforeAll(() => {
  a = new Redis(inject('redisUrl'));
  b = new Redis(inject('redisUrl'));
});

afterAll(async () => {
  const keys = await a.keys(`${prefix}*`);
  if (keys.length > 0) await a.del(...keys);
  a.disconnect();
  b.disconnect();
});

/** Calls granted per whole second since the first grant: the windows an authority would count. */
function perSecond(times: number[]): number[] {
  const t0 = Math.floor(Math.min(...times) / 1000);
  const buckets: number[] = [];
  for (const t of times) {
    const i = Math.floor(t / 1000) - t0;
    buckets[i] = (buckets[i] ?? 0) + 1;
  }
  return Array.from(buckets, (n) => n ?? 0);
}

describe('call spacing shared through Redis', () => {
  it('When two processes call as fast as they can under a 20/s limit, then no wall-clock second gets more than 20 calls and the rate stays above 18/s', async () => {
    const key = `${prefix}:twenty`;
    const one = createCallSpacer(a, { key, callsPerSecond: 20 });
    const two = createCallSpacer(b, { key, callsPerSecond: 20 });
    const granted: number[] = [];
    const caller = async (s: typeof one, n: number) => {
      for (let i = 0; i < n; i++) {
        await s.acquire();
        granted.push(Date.now());
      }
    };
    const started = Date.now();
    // Eight callers per process, 50 calls in all: about 2.6 s at 19 calls a second.
    await Promise.all([
      ...Array.from({ length: 4 }, () => caller(one, 7)),
      ...Array.from({ length: 4 }, () => caller(two, 6)),
    ]);
    const elapsed = (Date.now() - started) / 1000;
    expect(granted).toHaveLength(52);
    expect(Math.max(...perSecond(granted))).toBeLessThanOrEqual(20);
    // The first call goes at once; the other 51 are spaced 52.5 ms apart.
    expect(elapsed).toBeGreaterThanOrEqual(51 * 0.0525 - 0.05);
    expect(51 / elapsed).toBeGreaterThanOrEqual(18);
  });

  it('When the authority asks for a pause, then no caller in any process is let through before it ends', async () => {
    const key = `${prefix}:pause`;
    const one = createCallSpacer(a, { key, callsPerSecond: 100 });
    const two = createCallSpacer(b, { key, callsPerSecond: 100 });
    await one.acquire();
    const paused = Date.now();
    await one.pause(400);
    await two.acquire();
    expect(Date.now() - paused).toBeGreaterThanOrEqual(390);
  });

  it('When the backlog is longer than a caller may wait, then it is refused at once', async () => {
    const key = `${prefix}:backlog`;
    const s = createCallSpacer(a, { key, callsPerSecond: 1, maxWaitMs: 500 });
    await s.acquire();
    const t = Date.now();
    // The next instant is 1.05 s away, beyond the 500 ms this caller may wait.
    await expect(s.acquire()).rejects.toBeInstanceOf(SpacingBacklogError);
    expect(Date.now() - t).toBeLessThan(900);
  });

  it('When no limit is configured, then calls are not delayed, but an authority pause still holds every caller', async () => {
    const key = `${prefix}:off`;
    const s = createCallSpacer(a, { key, callsPerSecond: 0 });
    const other = createCallSpacer(b, { key, callsPerSecond: 0 });
    const t = Date.now();
    for (let i = 0; i < 100; i++) await s.acquire();
    // Spaced at even 20 ms apart, 100 calls would take 2 s.
    expect(Date.now() - t).toBeLessThan(1500);
    await s.pause(300);
    const paused = Date.now();
    await other.acquire();
    expect(Date.now() - paused).toBeGreaterThanOrEqual(290);
  });
});
