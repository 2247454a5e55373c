import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createBackgroundLane } from '../../src/modules/capacity/background-lane.ts';
import type { RedisClient } from '../../src/lib/redis.ts';

/** A subscriber connection that hears what the test publishes. */
function fakeSubscriber() {
  const e = new EventEmitter() as EventEmitter & { subscribe(c: string): Promise<number>; quit(): Promise<string>; disconnect(): void };
  e.subscribe = async () => 1;
  e.quit = async () => 'OK';
  e.disconnect = () => undefined;
  return e;
}

const settle = () => new Promise((r) => setImmediate(r));

/** A step that runs until the test ends it, recording when it started. */
function held(log: string[], name: string) {
  let end!: () => void;
  const done = new Promise<void>((r) => (end = r));
  return { step: () => (log.push(name), done), end };
}

describe('the background lane', () => {
  it('When interactive lookups are in flight, then background steps pass one at a time, in order; when the count falls to zero, every waiting step goes at once', async () => {
    const sub = fakeSubscriber();
    const lane = await createBackgroundLane({ subscriber: sub as unknown as RedisClient, channel: 'ch', busyLimit: 1, count: async () => 0 });
    const log: string[] = [];
    sub.emit('message', 'ch', 'a:2');
    expect(lane.interactive).toBe(2);
    const steps = ['s1', 's2', 's3', 's4'].map((n) => held(log, n));
    const runs = steps.map((s) => lane.run(s.step));
    await settle();
    expect(log).toEqual(['s1']);
    expect(lane.waiting).toBe(3);
    steps[0]!.end();
    await runs[0];
    await settle();
    expect(log).toEqual(['s1', 's2']);
    // One interactive lookup settles, one is still in flight: still one at a time.
    sub.emit('message', 'ch', 'f:1');
    await settle();
    expect(log).toEqual(['s1', 's2']);
    // The last one settles: the rest go together.
    sub.emit('message', 'ch', 'f:0');
    await settle();
    expect(log).toEqual(['s1', 's2', 's3', 's4']);
    for (const s of steps) s.end();
    await Promise.all(runs);
    await lane.close();
  });

  it('When the count is read again (a reconnect, the periodic feed), then the lane follows it', async () => {
    const sub = fakeSubscriber();
    let count = 3;
    const lane = await createBackgroundLane({ subscriber: sub as unknown as RedisClient, channel: 'ch', busyLimit: 2, count: async () => count });
    expect(lane.interactive).toBe(3);
    count = 0;
    await lane.refresh();
    expect(lane.interactive).toBe(0);
    await lane.close();
  });

  it('When interactive lookups come and go, then the lane is busy while one is in flight and for the quiet period after the last event heard, on its own clock', async () => {
    const sub = fakeSubscriber();
    let t = 1_000;
    const lane = await createBackgroundLane({ subscriber: sub as unknown as RedisClient, channel: 'ch', busyLimit: 1, count: async () => 0, quietMs: 2_000, now: () => t });
    expect(lane.busy).toBe(false);
    sub.emit('message', 'ch', 'a:1');
    expect(lane.busy).toBe(true);
    t += 10_000;
    // Still in flight, however long ago it was admitted.
    expect(lane.busy).toBe(true);
    sub.emit('message', 'ch', 'f:0');
    expect(lane.busy).toBe(true);
    t += 1_999;
    expect(lane.busy).toBe(true);
    t += 1;
    expect(lane.busy).toBe(false);
    // Another channel's messages are not interactive events.
    sub.emit('message', 'other', 'a:1');
    expect(lane.busy).toBe(false);
    await lane.close();
  });

  it('When there is no quiet period, then the lane is busy exactly while a lookup is in flight', async () => {
    const sub = fakeSubscriber();
    const lane = await createBackgroundLane({ subscriber: sub as unknown as RedisClient, channel: 'ch', busyLimit: 1, count: async () => 0, quietMs: 0, now: () => 5 });
    sub.emit('message', 'ch', 'a:1');
    expect(lane.busy).toBe(true);
    sub.emit('message', 'ch', 'f:0');
    expect(lane.busy).toBe(false);
    await lane.close();
  });
});
