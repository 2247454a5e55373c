import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failureCode, resilient, upstreamRetry, type UpstreamHooks } from '../../src/adapters/identity-authority/resilient.ts';
import { createSandboxAuthority } from '../../src/adapters/identity-authority/sandbox.ts';
import type { IdentityAuthority } from '../../src/adapters/identity-authority/types.ts';
import { startIdentitySimulator, type IdentitySimulator } from '../../src/simulators/identity-authority/server.ts';
import { upstreamError as failure } from '../setup/upstream.ts';

const API_KEY = 'sim-test-key';
const REASON = 'corporate';

let sim: IdentitySimulator;
let authority: IdentityAuthority;
// An upstream asking for a wait longer than any worker should sleep: the simulator only asks for 1 s.
let slowDown: Server;
let slowDownUrl: string;

beforeAll(async () => {
  sim = await startIdentitySimulator({ port: 0, apiKey: API_KEY });
  authority = createSandboxAuthority({ baseUrl: sim.url, apiKey: API_KEY, timeoutMs: 5_000 });
  slowDown = createServer((_req, res) => {
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '30' });
    res.end(JSON.stringify({ status: false, message: 'Too many requests' }));
  });
  await new Promise<void>((resolve) => slowDown.listen(0, '127.0.0.1', resolve));
  slowDownUrl = `http://127.0.0.1:${(slowDown.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await sim?.close();
  await new Promise<void>((resolve) => (slowDown ? slowDown.close(() => resolve()) : resolve()));
});

/** The wrapped adapter, and what its hooks saw. */
function watched(inner: IdentityAuthority, maxAttempts: number) {
  const attempts: { attempt: number; outcome: string }[] = [];
  const retries: { attempt: number; code: string; delayMs: number }[] = [];
  const hooks: UpstreamHooks = {
    attempted: (a) => {
      expect(a.operation).toBe('nin');
      expect(a.seconds).toBeGreaterThanOrEqual(0);
      attempts.push({ attempt: a.attempt, outcome: a.outcome });
    },
    retrying: (r) => retries.push(r),
  };
  const identity = resilient(inner, upstreamRetry({ maxAttempts, backoffMs: 10 }, hooks), hooks);
  return { identity, attempts, retries };
}

describe('identity calls with retries', () => {
  it('When the upstream answers 503 twice and then the record, then the third attempt returns it', async () => {
    const { identity, attempts, retries } = watched(authority, 4);
    const calls = sim.stats().calls;
    const outcome = await identity.lookupNin({ nin: '50001234567', reason: REASON });
    expect(outcome.kind).toBe('found');
    expect(sim.stats().calls).toBe(calls + 3);
    expect(attempts).toEqual([
      { attempt: 1, outcome: 'upstream_unavailable' },
      { attempt: 2, outcome: 'upstream_unavailable' },
      { attempt: 3, outcome: 'found' },
    ]);
    expect(retries.map((r) => [r.attempt, r.code])).toEqual([
      [1, 'upstream_unavailable'],
      [2, 'upstream_unavailable'],
    ]);
    // Full jitter below base * 2^(n-1).
    expect(retries[0]!.delayMs).toBeLessThanOrEqual(10);
    expect(retries[1]!.delayMs).toBeLessThanOrEqual(20);
  });

  it('When the upstream keeps answering 503, then it is called exactly the configured number of times and the last fault comes back', async () => {
    const { identity, attempts, retries } = watched(authority, 3);
    const calls = sim.stats().calls;
    const err = await failure(identity.lookupNin({ nin: '50011234567', reason: REASON }));
    expect(err.status).toBe(503);
    expect(failureCode(err)).toBe('upstream_unavailable');
    expect(sim.stats().calls).toBe(calls + 3);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
    expect(retries.length).toBe(2);
  });

  it('When the upstream answers 429 with Retry-After: 1, then the next attempt waits at least that second', async () => {
    const { identity, attempts, retries } = watched(authority, 2);
    const calls = sim.stats().calls;
    const started = Date.now();
    const err = await failure(identity.lookupNin({ nin: '50031234567', reason: REASON }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
    expect(failureCode(err)).toBe('upstream_rate_limited');
    expect(sim.stats().calls).toBe(calls + 2);
    expect(attempts.map((a) => a.outcome)).toEqual(['upstream_rate_limited', 'upstream_rate_limited']);
    expect(retries).toHaveLength(1);
    expect(retries[0]!.delayMs).toBeGreaterThanOrEqual(1000);
  });

  it('When the upstream asks for a wait over 10 s, then the call fails at once without a second attempt', async () => {
    const upstream = createSandboxAuthority({ baseUrl: slowDownUrl, apiKey: API_KEY, timeoutMs: 5_000 });
    const { identity, attempts, retries } = watched(upstream, 4);
    const started = Date.now();
    const err = await failure(identity.lookupNin({ nin: '31415926535', reason: REASON }));
    expect(Date.now() - started).toBeLessThan(1000);
    expect(err.retryAfterMs).toBe(30_000);
    expect(failureCode(err)).toBe('upstream_rate_limited');
    expect(attempts).toEqual([{ attempt: 1, outcome: 'upstream_rate_limited' }]);
    expect(retries).toEqual([]);
  });

  it('When the upstream refuses the request with a 4xx, then it is not retried', async () => {
    const wrongKey = createSandboxAuthority({ baseUrl: sim.url, apiKey: 'not-the-key', timeoutMs: 5_000 });
    const { identity, attempts, retries } = watched(wrongKey, 4);
    const calls = sim.stats().calls;
    const err = await failure(identity.lookupNin({ nin: '31415926535', reason: REASON }));
    expect(err.status).toBe(401);
    expect(failureCode(err)).toBe('upstream_rejected');
    expect(sim.stats().calls).toBe(calls + 1);
    expect(attempts).toEqual([{ attempt: 1, outcome: 'upstream_rejected' }]);
    expect(retries).toEqual([]);
  });

  it('When the record is not found, then that is an answer, not a fault to retry', async () => {
    const { identity, attempts } = watched(authority, 4);
    expect(await identity.lookupNin({ nin: '01234567890', reason: REASON })).toEqual({ kind: 'not_found' });
    expect(attempts).toEqual([{ attempt: 1, outcome: 'not_found' }]);
  });
});
