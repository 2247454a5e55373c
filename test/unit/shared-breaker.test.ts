import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import {
  BrokenCircuitError,
  createSharedBreaker,
  type BreakerState,
  type SharedBreaker,
} from '../../src/adapters/identity-authority/breaker.ts';
import { UpstreamError } from '../../src/adapters/identity-authority/types.ts';
import { waitFor } from '../setup/wait.ts';

/** Long enough that nothing here waits for it to pass. */
const LONG_COOLDOWN_MS = 5000;
const SHORT_COOLDOWN_MS = 400;

/** One "process": its own publishing and subscribing connections, its own breaker. */
type Proc = { breaker: SharedBreaker; states: BreakerState[]; received(): number; redis: Redis };

const procs: Proc[] = [];
const prefixes: string[] = [];

function newPrefix(): string {
  const p = `${inject('runId')}:brk${randomBytes(4).toString('hex')}`;
  prefixes.push(p);
  return p;
}

async function startProc(keyPrefix: string, cooldownMs = LONG_COOLDOWN_MS): Promise<Proc> {
  const redis = new Redis(inject('redisUrl'));
  const subscriber = new Redis(inject('redisUrl'));
  const states: BreakerState[] = [];
  const breaker = await createSharedBreaker({ redis, subscriber, keyPrefix, cooldownMs, onStateChange: (s) => states.push(s) });
  // Registered after the breaker's own listener, so it sees each message just after the breaker does.
  let received = 0;
  subscriber.on('message', () => received++);
  const proc = { breaker, states, received: () => received, redis };
  procs.push(proc);
  return proc;
}

afterEach(async () => {
  const done = procs.splice(0);
  for (const p of done) await p.breaker.close();
  const cleaner = done[0]?.redis;
  for (const prefix of prefixes.splice(0)) {
    const keys = cleaner ? await cleaner.keys(`${prefix}:*`) : [];
    if (cleaner && keys.length > 0) await cleaner.del(...keys);
  }
  for (const p of done) await p.redis.quit();
});

// Outcomes travel through Redis pub/sub in milliseconds: poll often.
const until = async (cond: () => boolean, what: string, ms = 5000): Promise<void> => void (await waitFor(cond, { what, timeoutMs: ms, intervalMs: 5 }));

/** Waits until `p` has received `n` published outcomes and its policy has recorded them. */
async function replayed(p: Proc, n: number): Promise<void> {
  await until(() => p.received() >= n, `${n} outcomes received`);
  await new Promise((r) => setImmediate(r));
}

const outage = () => new UpstreamError('sandbox: lookup answered HTTP 503', { retryable: true, status: 503 });

/** Calls the "authority" through the breaker; returns how it went, counting real calls. */
function caller() {
  let calls = 0;
  return {
    calls: () => calls,
    async call(p: Proc, answer: 'ok' | (() => UpstreamError)): Promise<'ok' | unknown> {
      try {
        return await p.breaker.execute(async () => {
          calls++;
          if (answer === 'ok') return 'ok' as const;
          throw answer();
        });
      } catch (err) {
        return err;
      }
    },
  };
}

async function openBoth(a: Proc, b: Proc, authority = caller()): Promise<void> {
  for (let i = 0; i < 10; i++) expect(await authority.call(a, 'ok')).toBe('ok');
  for (let i = 0; i < 10; i++) expect(await authority.call(a, outage)).toBeInstanceOf(UpstreamError);
  expect(a.breaker.state()).toBe('open');
  await until(() => b.states.length > 0, 'B open');
  expect(b.states).toEqual(['open']);
}

describe('shared circuit breaker on the identity authority', () => {
  it('When half of 20 calls through one process fail with 503, then both processes open and the other refuses at once without calling', async () => {
    const prefix = newPrefix();
    const a = await startProc(prefix);
    const b = await startProc(prefix);
    const authority = caller();
    for (let i = 0; i < 10; i++) expect(await authority.call(a, 'ok')).toBe('ok');
    for (let i = 0; i < 9; i++) expect(await authority.call(a, outage)).toBeInstanceOf(UpstreamError);
    expect(a.breaker.state()).toBe('closed');
    expect(a.breaker.isOpen()).toBe(false);
    expect(await authority.call(a, outage)).toBeInstanceOf(UpstreamError);
    expect(a.breaker.state()).toBe('open');
    expect(a.breaker.isOpen()).toBe(true);
    expect(authority.calls()).toBe(20);

    await until(() => b.breaker.isOpen(), 'B open');
    expect(b.breaker.state()).toBe('open');
    expect(a.states).toEqual(['open']);
    expect(b.states).toEqual(['open']);

    const started = Date.now();
    expect(await authority.call(b, 'ok')).toBeInstanceOf(BrokenCircuitError);
    expect(await authority.call(a, 'ok')).toBeInstanceOf(BrokenCircuitError);
    // No call made (the count) and no waiting on anything (bound generous for a loaded machine).
    expect(Date.now() - started).toBeLessThan(500);
    expect(authority.calls()).toBe(20);
  });

  it('When 19 of 19 calls fail (below the minimum volume), then neither process opens; the 20th failure opens both', async () => {
    const prefix = newPrefix();
    const a = await startProc(prefix);
    const b = await startProc(prefix);
    const authority = caller();
    for (let i = 0; i < 19; i++) expect(await authority.call(a, outage)).toBeInstanceOf(UpstreamError);
    await replayed(b, 19);
    expect(a.breaker.state()).toBe('closed');
    expect(b.breaker.state()).toBe('closed');
    expect(b.breaker.isOpen()).toBe(false);

    expect(await authority.call(a, outage)).toBeInstanceOf(UpstreamError);
    expect(a.breaker.state()).toBe('open');
    await until(() => b.breaker.isOpen(), 'B open');
    expect(a.states).toEqual(['open']);
    expect(b.states).toEqual(['open']);
  });

  it('When calls fail with 404 or 429, then they count as healthy calls and never open the circuit', async () => {
    const prefix = newPrefix();
    const a = await startProc(prefix);
    const b = await startProc(prefix);
    const authority = caller();
    const notFound = new UpstreamError('sandbox: lookup answered HTTP 404', { retryable: false, status: 404 });
    const tooMany = new UpstreamError('sandbox: lookup answered HTTP 429', { retryable: true, status: 429 });
    for (let i = 0; i < 10; i++) {
      expect(await authority.call(a, () => notFound)).toBe(notFound);
      expect(await authority.call(a, () => tooMany)).toBe(tooMany);
    }
    // 19 outages among 39 calls is under half.
    for (let i = 0; i < 19; i++) expect(await authority.call(a, outage)).toBeInstanceOf(UpstreamError);
    await replayed(b, 39);
    expect(a.breaker.state()).toBe('closed');
    expect(b.breaker.state()).toBe('closed');

    // 20 among 40 is half.
    expect(await authority.call(a, outage)).toBeInstanceOf(UpstreamError);
    expect(a.breaker.state()).toBe('open');
    await until(() => b.breaker.isOpen(), 'B open');
    expect(authority.calls()).toBe(40);
  });

  it('When the caller aborts calls, then they count for nothing, neither as failures nor as healthy calls', async () => {
    const prefix = newPrefix();
    const a = await startProc(prefix);
    const b = await startProc(prefix);
    const authority = caller();
    const aborted = AbortSignal.abort();
    for (let i = 0; i < 19; i++) {
      const err = await a.breaker
        .execute(async () => {
          throw new UpstreamError('sandbox: call aborted by caller', { retryable: true });
        }, aborted)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UpstreamError);
    }
    for (let i = 0; i < 10; i++) expect(await authority.call(a, 'ok')).toBe('ok');
    for (let i = 0; i < 9; i++) expect(await authority.call(a, outage)).toBeInstanceOf(UpstreamError);
    await replayed(b, 19);
    expect(a.breaker.state()).toBe('closed');
    expect(b.breaker.state()).toBe('closed');
    expect(await authority.call(a, outage)).toBeInstanceOf(UpstreamError);
    expect(a.breaker.state()).toBe('open');
    await until(() => b.breaker.isOpen(), 'B open');
  });

  it('When the cool-down has passed, then a failing probe reopens both, and three successful probes close both', async () => {
    const prefix = newPrefix();
    const a = await startProc(prefix, SHORT_COOLDOWN_MS);
    const b = await startProc(prefix, SHORT_COOLDOWN_MS);
    const authority = caller();
    await openBoth(a, b, authority);

    await until(() => !a.breaker.isOpen() && !b.breaker.isOpen(), 'cool-down passed');
    expect(a.breaker.state()).toBe('half_open');
    expect(await authority.call(a, outage)).toBeInstanceOf(UpstreamError);
    expect(authority.calls()).toBe(21);
    expect(a.breaker.state()).toBe('open');
    expect(a.breaker.isOpen()).toBe(true);
    await until(() => b.states.length === 3, 'B open again');
    expect(b.states).toEqual(['open', 'half_open', 'open']);
    expect(await authority.call(b, 'ok')).toBeInstanceOf(BrokenCircuitError);
    expect(authority.calls()).toBe(21);

    await until(() => !a.breaker.isOpen() && !b.breaker.isOpen(), 'second cool-down passed');
    for (let i = 0; i < 2; i++) {
      expect(await authority.call(a, 'ok')).toBe('ok');
      expect(a.breaker.state()).toBe('half_open');
    }
    expect(await authority.call(a, 'ok')).toBe('ok');
    expect(a.breaker.state()).toBe('closed');
    await until(() => b.breaker.state() === 'closed', 'B closed');
    expect(authority.calls()).toBe(24);

    const cycle: BreakerState[] = ['open', 'half_open', 'open', 'half_open', 'closed'];
    expect(a.states).toEqual(cycle);
    expect(b.states).toEqual(cycle);
    expect(await authority.call(b, 'ok')).toBe('ok');
  });

  it('When a process starts while the circuit is open, then it starts open, and probes after the cool-down close it', async () => {
    const prefix = newPrefix();
    // Long enough for the new process to start before it passes.
    const cooldownMs = 1000;
    const a = await startProc(prefix, cooldownMs);
    const b = await startProc(prefix, cooldownMs);
    const authority = caller();
    await openBoth(a, b, authority);
    const ttl = await a.redis.pttl(`${prefix}:breaker:open-until`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(cooldownMs);

    const c = await startProc(prefix, cooldownMs);
    expect(c.breaker.isOpen()).toBe(true);
    expect(c.breaker.state()).toBe('open');
    expect(c.states).toEqual(['open']);
    expect(await authority.call(c, 'ok')).toBeInstanceOf(BrokenCircuitError);
    expect(authority.calls()).toBe(20);

    await until(() => !c.breaker.isOpen() && !a.breaker.isOpen() && !b.breaker.isOpen(), 'cool-down passed');
    for (let i = 0; i < 3; i++) expect(await authority.call(c, 'ok')).toBe('ok');
    expect(c.breaker.state()).toBe('closed');
    await until(() => a.breaker.state() === 'closed' && b.breaker.state() === 'closed', 'A and B closed');
    expect(c.states).toEqual(['open', 'half_open', 'closed']);
    expect(a.states).toEqual(['open', 'half_open', 'closed']);
  });

  it('When an API process sees the circuit open, then it refuses every lookup until the cool-down, and then lets only the probes through until the circuit closes', async () => {
    const prefix = newPrefix();
    const worker = await startProc(prefix, SHORT_COOLDOWN_MS);
    const api = await startProc(prefix, SHORT_COOLDOWN_MS);
    const authority = caller();
    expect(api.breaker.shouldRefuse()).toBe(false);
    await openBoth(worker, api, authority);
    expect([api.breaker.shouldRefuse(), api.breaker.shouldRefuse()]).toEqual([true, true]);

    await until(() => !api.breaker.isOpen(), 'the cool-down to pass');
    // Three probes (the default) per open period go to the workers; the rest are still refused.
    expect(Array.from({ length: 5 }, () => api.breaker.shouldRefuse())).toEqual([false, false, false, true, true]);

    for (let i = 0; i < 3; i++) expect(await authority.call(worker, 'ok')).toBe('ok');
    await until(() => api.breaker.state() === 'closed', 'the API to close');
    expect(Array.from({ length: 5 }, () => api.breaker.shouldRefuse())).toEqual([false, false, false, false, false]);
  });

  it('When a probe the API let through never reaches the authority, then it is given back and the next lookup is let through instead', async () => {
    const prefix = newPrefix();
    const worker = await startProc(prefix, SHORT_COOLDOWN_MS);
    const api = await startProc(prefix, SHORT_COOLDOWN_MS);
    await openBoth(worker, api, caller());
    await until(() => !api.breaker.isOpen(), 'the cool-down to pass');
    expect(Array.from({ length: 4 }, () => api.breaker.shouldRefuse())).toEqual([false, false, false, true]);
    // Two of the three were refused at admission or could not pay.
    api.breaker.unusedProbe();
    api.breaker.unusedProbe();
    expect(Array.from({ length: 3 }, () => api.breaker.shouldRefuse())).toEqual([false, false, true]);
    // Giving back more than was let through never lets more than the configured probes through.
    for (let i = 0; i < 5; i++) api.breaker.unusedProbe();
    expect(Array.from({ length: 4 }, () => api.breaker.shouldRefuse())).toEqual([false, false, false, true]);
  });
});

