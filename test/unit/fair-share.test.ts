import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createFairShare, isBackgroundPriority, predictedFinishMs, SYNC_MAX_TAG } from '../../src/modules/capacity/fair-share.ts';

let redis: Redis;
const prefixes: string[] = [];

function fresh(staleMs = 60_000) {
  const prefix = `${inject('runId')}-fair-${randomBytes(3).toString('hex')}`;
  prefixes.push(prefix);
  return createFairShare(redis, { prefix, staleMs, defaultLookupMs: 1000 });
}

beforeAll(() => {
  redis = new Redis(inject('redisUrl'));
});

afterAll(async () => {
  for (const p of prefixes) {
    const keys = await redis.keys(`${p}*`);
    if (keys.length > 0) await redis.del(...keys);
  }
  redis.disconnect();
});

describe('fair share of the identity authority', () => {
  it('When asynchronous lookups are tagged, then every one sorts after every synchronous one, organisations take turns among them, and neither lane moves the other', async () => {
    const fs = fresh();
    const a = [];
    for (let i = 0; i < 50; i++) a.push(await fs.background.admit({ orgId: 1, referenceId: `REF-BA${i}` }));
    expect(a[0]).toBe(SYNC_MAX_TAG + 1);
    expect(a.every((p, i) => p === SYNC_MAX_TAG + 1 + i && isBackgroundPriority(p))).toBe(true);
    // A's first ten start: another organisation's first background lookup comes right after them.
    for (let i = 0; i < 10; i++) await fs.started(a[i]!);
    expect(await fs.background.admit({ orgId: 2, referenceId: 'REF-BB0' })).toBe(SYNC_MAX_TAG + 11);
    // The synchronous lane is untouched: tags from 1, far below, and refused only at its own cap.
    const sync = await fs.admit({ orgId: 1, referenceId: 'REF-S0', cap: 1 });
    expect(sync).toMatchObject({ admitted: true, priority: 1 });
    expect(isBackgroundPriority(1)).toBe(false);
    expect(await fs.snapshot()).toEqual(new Map([[1, 1]]));
    // Never refused, however many wait; finishing gives the reference back.
    await fs.background.finish({ orgId: 1, referenceId: 'REF-BA0' });
    expect(await fs.background.admit({ orgId: 1, referenceId: 'REF-BA50' })).toBe(SYNC_MAX_TAG + 51);
  });

  it("When an organisation bursts, then its lookups are tagged 1, 2, 3... and another organisation's first gets priority 1", async () => {
    const fs = fresh();
    const a = [];
    for (let i = 0; i < 5; i++) a.push(await fs.admit({ orgId: 1, referenceId: `REF-A${i}`, cap: 10 }));
    expect(a.map((x) => (x.admitted ? x.priority : null))).toEqual([1, 2, 3, 4, 5]);
    // B's first lookup: ahead of it only A's lookups of priority <= 1.
    const b = await fs.admit({ orgId: 2, referenceId: 'REF-B0', cap: 10 });
    expect(b).toMatchObject({ admitted: true, priority: 1, ahead: 1 });
    // A's sixth: its own five, and B's one.
    const a6 = await fs.admit({ orgId: 1, referenceId: 'REF-A5', cap: 10 });
    expect(a6).toMatchObject({ admitted: true, priority: 6, ahead: 6 });
    expect(await fs.snapshot()).toEqual(new Map([[1, 6], [2, 1]]));
  });

  it('When an organisation is at its cap, then the next is refused until one of its lookups settles', async () => {
    const fs = fresh();
    for (let i = 0; i < 3; i++) expect((await fs.admit({ orgId: 7, referenceId: `REF-${i}`, cap: 3 })).admitted).toBe(true);
    expect(await fs.admit({ orgId: 7, referenceId: 'REF-X', cap: 3 })).toMatchObject({ admitted: false, reason: 'cap', inFlight: 3 });
    await fs.finish({ orgId: 7, referenceId: 'REF-1', durationMs: 200 });
    // Settling twice (a job re-run) changes nothing more.
    await fs.finish({ orgId: 7, referenceId: 'REF-1' });
    // Tagged after the organisation's own lookups still waiting (1 and 3), not before them.
    expect(await fs.admit({ orgId: 7, referenceId: 'REF-X', cap: 3 })).toMatchObject({ admitted: true, priority: 4 });
    expect(await fs.admit({ orgId: 7, referenceId: 'REF-Y', cap: 3 })).toMatchObject({ admitted: false });
  });

  it('When an organisation keeps lookups in flight and some settle, then its new ones still queue behind its older ones (first in, first out)', async () => {
    const fs = fresh();
    const tags: number[] = [];
    for (let i = 0; i < 200; i++) {
      const a = await fs.admit({ orgId: 9, referenceId: `REF-F${i}`, cap: 1000 });
      tags.push(a.admitted ? a.priority : Number.NaN);
      // Now and then a burst of the oldest settles, so the count in flight dips and rises.
      if (i % 20 === 19) for (let j = i - 19; j < i - 9; j++) await fs.finish({ orgId: 9, referenceId: `REF-F${j}` });
    }
    for (let i = 1; i < tags.length; i++) expect(tags[i], `lookup ${i}`).toBeGreaterThan(tags[i - 1]!);
  });

  it('When two organisations both have lookups waiting, then they take turns, and a newcomer starts at the virtual time, not behind the backlog', async () => {
    const fs = fresh();
    for (let i = 0; i < 100; i++) await fs.admit({ orgId: 1, referenceId: `REF-A${i}`, cap: 1000 });
    // A's first 50 start and settle: the virtual time is 50.
    for (let i = 0; i < 50; i++) {
      await fs.started(i + 1);
      await fs.finish({ orgId: 1, referenceId: `REF-A${i}` });
    }
    const b = [];
    for (let i = 0; i < 3; i++) b.push(await fs.admit({ orgId: 2, referenceId: `REF-B${i}`, cap: 1000 }));
    // B's lookups come right after A's oldest waiting one (tag 51), one tag apart: A's 52nd and B's
    // second share a tag, so they alternate.
    expect(b.map((x) => (x.admitted ? x.priority : null))).toEqual([51, 52, 53]);
    // Ahead of B's first: A's lookups tagged up to 51 (one), none of B's own.
    expect(b[0]).toMatchObject({ ahead: 1 });
    // A's next is still after all of A's own.
    expect(await fs.admit({ orgId: 1, referenceId: 'REF-A100', cap: 1000 })).toMatchObject({ priority: 101 });
  });

  it('When an organisation kept one lookup in flight for long while another ran hundreds, then its burst takes turns with the other, and banks no credit', async () => {
    const fs = fresh();
    // S keeps one slow lookup in flight (tag 1) the whole time.
    expect(await fs.admit({ orgId: 20, referenceId: 'REF-S-slow', cap: 1000 })).toMatchObject({ priority: 1 });
    // A runs 300 lookups (tags 1, 2, 3...), 20 queued at any time: each starts (the virtual time
    // follows) and settles.
    for (let i = 0; i < 20; i++) await fs.admit({ orgId: 21, referenceId: `REF-A${i}`, cap: 1000 });
    for (let i = 0; i < 300; i++) {
      const a = await fs.admit({ orgId: 21, referenceId: `REF-A${i + 20}`, cap: 1000 });
      await fs.started(i + 1);
      await fs.finish({ orgId: 21, referenceId: `REF-A${i}` });
      if (i === 299) expect(a).toMatchObject({ priority: 320 });
    }
    // S bursts: its tags start just above the virtual time (300), not just after its old tag 1, so
    // A's 20 queued lookups (tags 301-320) and S's burst alternate instead of S's whole burst going first.
    const burst = [];
    for (let i = 0; i < 5; i++) burst.push(await fs.admit({ orgId: 20, referenceId: `REF-S${i}`, cap: 1000 }));
    expect(burst.map((x) => (x.admitted ? x.priority : null))).toEqual([301, 302, 303, 304, 305]);
  });

  it('When a lookup is refused after admission, then its tag is taken back and the next one reuses it', async () => {
    const fs = fresh();
    const first = await fs.admit({ orgId: 30, referenceId: 'REF-R0', cap: 10 });
    const refused = await fs.admit({ orgId: 30, referenceId: 'REF-R1', cap: 10 });
    expect([first, refused].map((x) => (x.admitted ? x.priority : null))).toEqual([1, 2]);
    await fs.finish({ orgId: 30, referenceId: 'REF-R1', unusedTag: 2 });
    expect(await fs.admit({ orgId: 30, referenceId: 'REF-R2', cap: 10 })).toMatchObject({ priority: 2 });
    // Not when a later lookup already took the next tag.
    const later = await fs.admit({ orgId: 30, referenceId: 'REF-R3', cap: 10 });
    await fs.finish({ orgId: 30, referenceId: 'REF-R2', unusedTag: 2 });
    expect(later).toMatchObject({ priority: 3 });
    expect(await fs.admit({ orgId: 30, referenceId: 'REF-R4', cap: 10 })).toMatchObject({ priority: 4 });
  });

  it('When no lookup has been measured, then the mean lookup time is the default; each settled lookup moves it, from either lane', async () => {
    const fs = fresh();
    expect(await fs.meanLookupMs()).toBe(1000);
    await fs.admit({ orgId: 1, referenceId: 'REF-M1', cap: 5 });
    await fs.finish({ orgId: 1, referenceId: 'REF-M1', durationMs: 20 });
    // The first measure sets the mean; the next moves it by the smoothing factor.
    expect(await fs.meanLookupMs()).toBe(20);
    await fs.background.admit({ orgId: 2, referenceId: 'REF-M2' });
    await fs.background.finish({ orgId: 2, referenceId: 'REF-M2', durationMs: 1020 });
    expect(await fs.meanLookupMs()).toBeCloseTo(70, 6);
  });

  it('When nothing is in flight any more, then tags start again from 1', async () => {
    const fs = fresh();
    for (let i = 0; i < 5; i++) await fs.admit({ orgId: 5, referenceId: `REF-E${i}`, cap: 10 });
    for (let i = 0; i < 5; i++) await fs.finish({ orgId: 5, referenceId: `REF-E${i}` });
    expect(await fs.admit({ orgId: 6, referenceId: 'REF-N0', cap: 10 })).toMatchObject({ priority: 1, ahead: 0 });
  });

  it('When a lookup was lost with a crashed worker, then it stops counting once it is stale', async () => {
    const fs = fresh(300);
    await fs.admit({ orgId: 3, referenceId: 'REF-LOST', cap: 1 });
    expect((await fs.admit({ orgId: 3, referenceId: 'REF-NEXT', cap: 1 })).admitted).toBe(false);
    await new Promise((r) => setTimeout(r, 350));
    expect((await fs.admit({ orgId: 3, referenceId: 'REF-NEXT', cap: 1 })).admitted).toBe(true);
  });

  it('When lookups settle, then their durations move the running mean that predictions use', async () => {
    const fs = fresh();
    const first = await fs.admit({ orgId: 4, referenceId: 'REF-M0', cap: 5 });
    expect(first.meanLookupMs).toBe(1000);
    for (let i = 0; i < 200; i++) await fs.finish({ orgId: 4, referenceId: `REF-D${i}`, durationMs: 2000 });
    const later = await fs.admit({ orgId: 4, referenceId: 'REF-M1', cap: 5 });
    expect(later.meanLookupMs).toBeGreaterThan(1990);
    expect(later.meanLookupMs).toBeLessThanOrEqual(2000);
  });

  it('When the authority is busy, then the predicted finish counts the queue beyond the free slots at the slower of the two limits', () => {
    const limits = { maxConcurrency: 32, maxRps: 0 };
    // Free slot: just its own call.
    expect(predictedFinishMs({ ahead: 10, meanLookupMs: 1200 }, limits)).toBe(1200);
    // 300 ahead, 32 slots of 1.2 s: 269 queued drain at 26.7/s = 10.1 s, then 1.2 s.
    expect(predictedFinishMs({ ahead: 300, meanLookupMs: 1200 }, limits)).toBeCloseTo(269 / (32 / 1.2) * 1000 + 1200, 6);
    // A 10 calls/s limit is the tighter one.
    expect(predictedFinishMs({ ahead: 300, meanLookupMs: 1200 }, { maxConcurrency: 32, maxRps: 10 })).toBeCloseTo(26_900 + 1200, 6);
  });
});
