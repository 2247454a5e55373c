import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIdentityAuthority, type IdentityAuthorityDialect } from '../../src/adapters/identity-authority/index.ts';
import type { IdentityAuthority } from '../../src/adapters/identity-authority/types.ts';
import { latencyFor } from '../../src/simulators/identity-authority/latency.ts';
import { startIdentitySimulator, type IdentitySimulator } from '../../src/simulators/identity-authority/server.ts';
import { foundRecord, upstreamError } from '../setup/upstream.ts';

/**
 * The simulator's Prembly and Dojah dialects through the real adapters: the same people, faults,
 * limits, outages and counters as the sandbox dialect, at the providers' paths, with their auth
 * headers and bodies (src/simulators/identity-authority/README.md).
 */
const API_KEY = 'dialect-test-key';
const APP_ID = 'dialect-test-app';
const REASON = 'corporate';

let sim: IdentitySimulator;
let sandbox: IdentityAuthority;
const adapter = (dialect: IdentityAuthorityDialect, o: { apiKey?: string; appId?: string; timeoutMs?: number } = {}) =>
  createIdentityAuthority({ dialect, baseUrl: sim.url, apiKey: o.apiKey ?? API_KEY, appId: o.appId ?? APP_ID, timeoutMs: o.timeoutMs ?? 5_000 });

beforeAll(async () => {
  sim = await startIdentitySimulator({ port: 0, apiKey: API_KEY, appId: APP_ID, hangMs: 300 });
  sandbox = adapter('sandbox');
});
afterAll(async () => sim.close());

/** A raw call the way each dialect asks for a NIN, for checks of status and body. */
function rawNin(dialect: 'prembly' | 'dojah', nin: string): Promise<Response> {
  if (dialect === 'prembly') {
    return fetch(`${sim.url}/identitypass/verification/vnin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': API_KEY, 'app-id': APP_ID },
      body: JSON.stringify({ number_nin: nin }),
    });
  }
  return fetch(`${sim.url}/api/v1/kyc/nin?nin=${nin}`, { headers: { AppId: APP_ID, Authorization: API_KEY } });
}

const CORE = ['fname', 'mname', 'lname', 'dob', 'gender', 'phone', 'image'] as const;
const core = (r: Record<string, string>) => Object.fromEntries(CORE.map((k) => [k, r[k]]));

describe.each(['prembly', 'dojah'] as const)('the %s dialect', (dialect) => {
  it('When a NIN is looked up, then it is the sandbox dialect\'s person, under the NIN asked for', async () => {
    for (const nin of ['31415926535', '27182818284', '98765432109']) {
      const spoken = foundRecord(await adapter(dialect).lookupNin({ nin, reason: REASON }));
      const reference = foundRecord(await sandbox.lookupNin({ nin, reason: REASON }));
      expect(core(spoken)).toEqual(core(reference));
      expect(spoken.nin).toBe(nin);
      expect(spoken.fname).not.toBe('');
    }
  });

  it('When a known phone is looked up, then its person comes back; an unknown phone and a 0-NIN are not found', async () => {
    const spoken = foundRecord(await adapter(dialect).lookupPhone({ phone: '08031234567', reason: REASON }));
    const reference = foundRecord(await sandbox.lookupPhone({ phone: '08031234567', reason: REASON }));
    expect({ ...core(spoken), phone: spoken.phone }).toEqual({ ...core(reference), phone: '08031234567' });
    expect(await adapter(dialect).lookupPhone({ phone: '06031234567', reason: REASON })).toEqual({ kind: 'not_found' });
    expect(await adapter(dialect).lookupNin({ nin: '01234567890', reason: REASON })).toEqual({ kind: 'not_found' });
  });

  it('When the fault NINs are asked, then 5001 is a retryable 503, 5003 a 429 with Retry-After, 5002 held until a 504', async () => {
    expect(await upstreamError(adapter(dialect).lookupNin({ nin: '50011234567', reason: REASON }))).toMatchObject({ retryable: true, status: 503 });
    expect(await upstreamError(adapter(dialect).lookupNin({ nin: '50031234567', reason: REASON }))).toMatchObject({ retryable: true, status: 429, retryAfterMs: 1000 });
    expect(await upstreamError(adapter(dialect).lookupNin({ nin: '50021234567', reason: REASON }))).toMatchObject({ retryable: true, status: 504 });
  });

  it('When the key or the app id is wrong or missing, then 401, not retryable', async () => {
    for (const o of [{ apiKey: 'wrong' }, { appId: 'wrong' }]) {
      expect(await upstreamError(adapter(dialect, o).lookupNin({ nin: '31415926535', reason: REASON }))).toMatchObject({ retryable: false, status: 401 });
    }
  });

  it('When an outage runs, then lookups get the dialect\'s 503, or its 504 after a hang, and are found again after', async () => {
    sim.outage({ mode: '503', forMs: 60_000 });
    const down = await rawNin(dialect, '31415926535');
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual(
      dialect === 'prembly'
        ? { status: false, detail: "Verification can't be completed by this time, kindly retry later.", response_code: '02' }
        : { error: 'Service temporarily unavailable' },
    );
    expect(await upstreamError(adapter(dialect).lookupNin({ nin: '31415926535', reason: REASON }))).toMatchObject({ retryable: true, status: 503 });
    sim.outage({ mode: 'hang', forMs: 100 });
    const held = await rawNin(dialect, '31415926535');
    expect(held.status).toBe(504);
    expect(await held.json()).toEqual(dialect === 'prembly' ? { status: false, detail: 'Upstream timeout' } : { error: 'Upstream timeout' });
    expect(foundRecord(await adapter(dialect).lookupNin({ nin: '31415926535', reason: REASON })).nin).toBe('31415926535');
  });

  it('When more lookups are in flight than the cap, then the extra one gets 429 in the dialect\'s body', async () => {
    // Long enough that both calls overlap even on a loaded machine.
    sim.configure({ maxConcurrency: 1, latencyMs: 1000 });
    try {
      const [a, b] = await Promise.all([rawNin(dialect, '31415926535'), rawNin(dialect, '27182818284')]);
      const refused = [a, b].find((r) => r.status === 429);
      expect([a.status, b.status].sort()).toEqual([200, 429]);
      expect(refused?.headers.get('retry-after')).toBe('1');
      const message = 'Too many concurrent requests';
      expect(await refused?.json()).toEqual(dialect === 'prembly' ? { status: false, detail: message } : { error: message });
    } finally {
      sim.configure({ maxConcurrency: 0, latencyMs: 0 });
    }
  });

  it('When the input is bad, then 400 naming the field only, not retryable', async () => {
    const err = await upstreamError(adapter(dialect).lookupNin({ nin: '123', reason: REASON }));
    expect(err).toMatchObject({ retryable: false, status: 400 });
    const res = await rawNin(dialect, '12345');
    expect(JSON.stringify(await res.json())).not.toContain('12345');
  });
});

describe('dialects side by side', () => {
  it('When Dojah\'s key comes as "Bearer <key>", then 401: Dojah takes the key as it is', async () => {
    const res = await fetch(`${sim.url}/api/v1/kyc/nin?nin=31415926535`, { headers: { AppId: APP_ID, Authorization: `Bearer ${API_KEY}` } });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'Invalid or missing API key' });
  });

  it('When a provider path is unknown, then its 404 carries no not-found marker the adapters would read as a missing person', async () => {
    const prembly = await fetch(`${sim.url}/identitypass/verification/nope`, { method: 'POST', headers: { 'x-api-key': API_KEY, 'app-id': APP_ID } });
    expect([prembly.status, await prembly.json()]).toEqual([404, { detail: 'Not found.' }]);
    const dojah = await fetch(`${sim.url}/api/v1/kyc/nope`, { headers: { AppId: APP_ID, Authorization: API_KEY } });
    expect([dojah.status, await dojah.json()]).toEqual([404, { message: 'No such endpoint' }]);
  });

  it('When one NIN is asked in every dialect, then each lookup is counted once and takes the same seeded time', async () => {
    sim.configure({ latency: { medianMs: 40, p95Ms: 120 } });
    sim.resetStats();
    try {
      const nin = '31415926535';
      const draw = latencyFor(`nin:${nin}`, { medianMs: 40, p95Ms: 120 });
      for (const d of ['sandbox', 'prembly', 'dojah'] as const) {
        const started = performance.now();
        await adapter(d).lookupNin({ nin, reason: REASON });
        expect(performance.now() - started, d).toBeGreaterThanOrEqual(draw - 2);
      }
      expect(sim.stats()).toMatchObject({ calls: 3, accepted: 3, statuses: { '200': 3 } });
    } finally {
      sim.configure({ latency: null });
    }
  });
});
