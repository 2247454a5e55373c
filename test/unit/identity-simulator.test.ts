import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxAuthority } from '../../src/adapters/identity-authority/sandbox.ts';
import type { IdentityAuthority } from '../../src/adapters/identity-authority/types.ts';
import { personRecordSchema } from '../../src/modules/verification/person.ts';
import { demographySeed } from '../../src/simulators/identity-authority/behaviour.ts';
import { latencyFor } from '../../src/simulators/identity-authority/latency.ts';
import { startIdentitySimulator, type IdentitySimulator, type IdentitySimulatorOptions } from '../../src/simulators/identity-authority/server.ts';
import { foundRecord, upstreamError } from '../setup/upstream.ts';
import { waitFor } from '../setup/wait.ts';

const API_KEY = 'sim-test-key';
const REASON = 'corporate';

let sim: IdentitySimulator;
let authority: IdentityAuthority;

beforeAll(async () => {
  sim = await startIdentitySimulator({ port: 0, apiKey: API_KEY, hangMs: 10_000 });
  authority = createSandboxAuthority({ baseUrl: sim.url, apiKey: API_KEY, timeoutMs: 5_000 });
});

afterAll(async () => {
  await sim.close();
});

describe('identity simulator through the sandbox adapter', () => {
  it('When the same NIN is looked up twice, then the same person comes back with a fresh transaction id', async () => {
    const first = await authority.lookupNin({ nin: '31415926535', reason: REASON });
    const second = await authority.lookupNin({ nin: '31415926535', reason: REASON });
    const a = foundRecord(first);
    const b = foundRecord(second);
    expect(a.nin).toBe('31415926535');
    expect(a.transaction_id).not.toBe('');
    expect(a.transaction_id).not.toBe(b.transaction_id);
    expect({ ...a, transaction_id: '' }).toEqual({ ...b, transaction_id: '' });
  });

  it('When NINs differ, then different people come back', async () => {
    const a = foundRecord(await authority.lookupNin({ nin: '31415926535', reason: REASON }));
    const b = foundRecord(await authority.lookupNin({ nin: '27182818284', reason: REASON }));
    expect([a.fname, a.lname, a.dob]).not.toEqual([b.fname, b.lname, b.dob]);
  });

  it('When the NIN starts with 0, then it is not found', async () => {
    expect(await authority.lookupNin({ nin: '01234567890', reason: REASON })).toEqual({ kind: 'not_found' });
  });

  it('When many NINs are normalised, then every record fits the schema, all variants occur and every field gets filled', async () => {
    const variants = new Set<string>();
    const filled = new Set<string>();
    let complete = 0;
    let sparse = 0;
    for (let i = 0; i < 60; i++) {
      const nin = String(10_000_000_000 + i * 1_234_567_891).slice(0, 11).replace(/^[05]/, '7');
      const outcome = await authority.lookupNin({ nin, reason: REASON });
      if (outcome.kind !== 'found') throw new Error('expected found');
      // The NIN key and the first-name key together tell the four upstream variants apart.
      const ninKey = ['nin', 'NIN', 'identityNumber'].find((k) => k in outcome.raw);
      const firstNameKey = ['firstname', 'firstName', 'fname'].find((k) => k in outcome.raw);
      variants.add(`${ninKey}/${firstNameKey}`);
      const record = foundRecord(outcome);
      expect(record.nin).toBe(nin);
      for (const [field, value] of Object.entries(record)) if (value !== '') filled.add(field);
      if (Object.values(record).every((v) => v !== '')) complete += 1;
      if (record.phone === '' && record.image === '') sparse += 1;
      if (record.image !== '') {
        const bytes = Buffer.from(record.image, 'base64');
        expect([...bytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
        expect([...bytes.subarray(-2)]).toEqual([0xff, 0xd9]);
      }
    }
    expect(filled.size).toBe(Object.keys(personRecordSchema.shape).length);
    expect(complete).toBeGreaterThan(0);
    expect(sparse).toBeGreaterThan(0);
    expect(variants.size).toBe(4);
  });

  it('When a NIN starts with 5000, then it answers 503 twice and then succeeds', async () => {
    const nin = '50001234567';
    for (let i = 0; i < 2; i++) {
      const err = await upstreamError(authority.lookupNin({ nin, reason: REASON }));
      expect(err).toMatchObject({ retryable: true, status: 503 });
    }
    expect(foundRecord(await authority.lookupNin({ nin, reason: REASON })).nin).toBe(nin);
    expect(foundRecord(await authority.lookupNin({ nin, reason: REASON })).nin).toBe(nin);
    // Counted per NIN: another 5000 NIN starts its own count.
    const other = await upstreamError(authority.lookupNin({ nin: '50009999999', reason: REASON }));
    expect(other.status).toBe(503);
  });

  it('When a NIN starts with 5001, then it always answers 503, retryable', async () => {
    for (let i = 0; i < 3; i++) {
      const err = await upstreamError(authority.lookupNin({ nin: '50011234567', reason: REASON }));
      expect(err).toMatchObject({ retryable: true, status: 503 });
    }
  });

  it('When a NIN starts with 5002, then the adapter times out with a retryable error', async () => {
    const impatient = createSandboxAuthority({ baseUrl: sim.url, apiKey: API_KEY, timeoutMs: 300 });
    const started = Date.now();
    const err = await upstreamError(impatient.lookupNin({ nin: '50021234567', reason: REASON }));
    expect(err.retryable).toBe(true);
    expect(err.status).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('When a NIN starts with 5003, then it answers 429, retryable, with retryAfterMs from Retry-After', async () => {
    const err = await upstreamError(authority.lookupNin({ nin: '50031234567', reason: REASON }));
    expect(err).toMatchObject({ retryable: true, status: 429, retryAfterMs: 1000 });
  });

  it('When a known phone is looked up, then the person carries that phone and a NIN whose lookup agrees', async () => {
    const byPhone = foundRecord(await authority.lookupPhone({ phone: '08031234567', reason: REASON }));
    expect(byPhone.phone).toBe('08031234567');
    expect(byPhone.nin).toMatch(/^\d{11}$/);
    const again = foundRecord(await authority.lookupPhone({ phone: '08031234567', reason: REASON }));
    expect({ ...again, transaction_id: '' }).toEqual({ ...byPhone, transaction_id: '' });

    const byNin = foundRecord(await authority.lookupNin({ nin: byPhone.nin, reason: REASON }));
    expect({ ...byNin, transaction_id: '' }).toEqual({ ...byPhone, transaction_id: '' });
  });

  it('When the phone does not match 0[7-9][01] and 8 digits, then it is not found', async () => {
    for (const phone of ['08231234567', '06031234567', '01234567890']) {
      expect(await authority.lookupPhone({ phone, reason: REASON })).toEqual({ kind: 'not_found' });
    }
  });

  it('When a demographic query is made, then the person echoes the query and is stable', async () => {
    const q = { firstName: 'Ngozi', lastName: 'Okafor', dob: '07-09-1984', gender: 'f' as const, reason: 'nyscCheck' };
    const a = foundRecord(await authority.lookupDemography(q));
    expect(a).toMatchObject({ fname: 'Ngozi', lname: 'Okafor', dob: '07-09-1984', gender: 'F' });
    expect(a.nin).toMatch(/^[1-9]\d{10}$/);
    const b = foundRecord(await authority.lookupDemography(q));
    expect({ ...a, transaction_id: '' }).toEqual({ ...b, transaction_id: '' });
  });

  it('When the demographic last name starts with Z, then it is not found', async () => {
    for (const lastName of ['Zubairu', 'zakari']) {
      const q = { firstName: 'Musa', lastName, dob: '01-01-1980', gender: 'm' as const, reason: 'nyscCheck' };
      expect(await authority.lookupDemography(q)).toEqual({ kind: 'not_found' });
    }
  });

  it('When the reasons are listed, then the contract keys and more are there', async () => {
    const reasons = await authority.listReasons();
    const keys = reasons.map((r) => r.key);
    expect(keys).toEqual(expect.arrayContaining(['corporate', 'nyscCheck', 'telecommunicationSimReg']));
    expect(keys.length).toBeGreaterThanOrEqual(5);
    for (const r of reasons) expect(r.label && r.description).toBeTruthy();
  });

  it('When the input is bad, then the adapter gets a non-retryable 400', async () => {
    const badNin = await upstreamError(authority.lookupNin({ nin: '123', reason: REASON }));
    expect(badNin).toMatchObject({ retryable: false, status: 400 });
    const badReason = await upstreamError(authority.lookupNin({ nin: '12345678912', reason: 'curiosity' }));
    expect(badReason).toMatchObject({ retryable: false, status: 400 });
    const badDob = await upstreamError(
      authority.lookupDemography({ firstName: 'A', lastName: 'B', dob: '31-02-1990', gender: 'm', reason: 'nyscCheck' }),
    );
    expect(badDob).toMatchObject({ retryable: false, status: 400 });
  });

  it('When the API key is wrong, then the adapter gets a non-retryable 401', async () => {
    const wrong = createSandboxAuthority({ baseUrl: sim.url, apiKey: 'nope', timeoutMs: 5_000 });
    const err = await upstreamError(wrong.lookupNin({ nin: '12345678912', reason: REASON }));
    expect(err).toMatchObject({ retryable: false, status: 401 });
    const res = await fetch(`${sim.url}/v1/reasons`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ status: false });
  });

  it('When the base URL is wrong, then a bare 404 is an error, not a missing person', async () => {
    const misrouted = createSandboxAuthority({ baseUrl: `${sim.url}/wrong`, apiKey: API_KEY, timeoutMs: 5_000 });
    const err = await upstreamError(misrouted.lookupNin({ nin: '12345678912', reason: REASON }));
    expect(err).toMatchObject({ retryable: false, status: 404 });
  });

  it('When calls are made, then stats counts them', async () => {
    const before = sim.stats().calls;
    await authority.listReasons();
    expect(sim.stats().calls).toBe(before + 1);
  });
});

describe('identity simulator lifecycle', () => {
  it('When latency is configured, then every answer is delayed by it', async () => {
    const slow = await startIdentitySimulator({ port: 0, latencyMs: 200 });
    try {
      const client = createSandboxAuthority({ baseUrl: slow.url, apiKey: '', timeoutMs: 5_000 });
      const started = Date.now();
      await client.lookupNin({ nin: '01234567890', reason: REASON });
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    } finally {
      await slow.close();
    }
  });

  it('When a request is held (5002), then close() does not wait for it', async () => {
    const held = await startIdentitySimulator({ port: 0 });
    const pending = fetch(`${held.url}/v1/nin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ nin: '50020000001', reason: REASON }),
    }).catch((e: unknown) => e);
    await waitFor(() => held.stats().calls === 1, { what: 'the 5002 request held' });
    const started = Date.now();
    await held.close();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await pending).toBeInstanceOf(Error);
  });
});

interface Answer {
  status: number;
  retryAfter: string | null;
  body: unknown;
  ms: number;
  /** When the answer was read (performance.now()): answers are ordered by it, never held to a time limit. */
  ended: number;
}

async function call(base: string, path: string, body?: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  const text = await res.text();
  const ended = performance.now();
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: text === '' ? undefined : JSON.parse(text), ms: ended - started, ended };
}

function ninCall(base: string, nin: string, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Answer> {
  return call(base, '/v1/nin', { nin, reason: REASON }, headers, signal);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, Math.max(0, ms)));
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

/** Runs fn over items with at most `width` in flight, keeping the answers in item order. */
async function pool<T, R>(items: T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i] as T);
      }
    }),
  );
  return out;
}

async function withSim(opts: IdentitySimulatorOptions, fn: (sim: IdentitySimulator) => Promise<void>): Promise<void> {
  const s = await startIdentitySimulator({ port: 0, ...opts });
  try {
    await fn(s);
  } finally {
    await s.close();
  }
}

describe('identity simulator latency distribution', () => {
  const distribution = { medianMs: 20, p95Ms: 80 };
  const nins = Array.from({ length: 300 }, (_, i) => `1${String(1_000_003 * (i + 1)).padStart(10, '0')}`);

  it('When a median and p95 are set, then the seeded draws over 300 NINs have that median and p95', () => {
    const drawn = nins.map((nin) => latencyFor(`nin:${nin}`, distribution));
    expect(quantile(drawn, 0.5)).toBeGreaterThanOrEqual(16);
    expect(quantile(drawn, 0.5)).toBeLessThanOrEqual(24);
    expect(quantile(drawn, 0.95)).toBeGreaterThanOrEqual(64);
    expect(quantile(drawn, 0.95)).toBeLessThanOrEqual(96);
    expect(nins.map((nin) => latencyFor(`nin:${nin}`, distribution))).toEqual(drawn);
  });

  it('When 300 NINs are looked up over HTTP, then each takes at least its draw, so the answers are at least as slow as the draws\' median and p95', async () => {
    await withSim({ latency: distribution }, async (s) => {
      // Unmeasured first calls: a cold process (this test may run first) adds its warm-up to the draws.
      await pool(nins.slice(0, 40), 20, (nin) => ninCall(s.url, nin));
      const answers = await pool(nins, 20, (nin) => ninCall(s.url, nin));
      answers.forEach((a, i) => {
        expect(a.status).toBe(200);
        expect(a.ms).toBeGreaterThanOrEqual(latencyFor(`nin:${nins[i]}`, distribution) - 1);
      });
      // No upper bound on wall-clock times: a loaded machine adds its own delay to every answer (an
      // upper bound failed at load 6). That the draws themselves have the median and p95 is the test above.
      const ms = answers.map((a) => a.ms);
      expect(quantile(ms, 0.5)).toBeGreaterThanOrEqual(16);
      expect(quantile(ms, 0.95)).toBeGreaterThanOrEqual(64);
    });
  });

  it('When the same NIN is looked up again, then it takes the same time: slow NINs stay slow, fast ones fast', async () => {
    const byDraw = [...nins].sort((a, b) => latencyFor(`nin:${a}`, distribution) - latencyFor(`nin:${b}`, distribution));
    const fast = byDraw[0] as string;
    const slow = byDraw[byDraw.length - 1] as string;
    const slowMs = latencyFor(`nin:${slow}`, distribution);
    expect(slowMs).toBeGreaterThanOrEqual(100);
    expect(latencyFor(`nin:${fast}`, distribution)).toBeLessThanOrEqual(8);
    await withSim({ latency: distribution }, async (s) => {
      await Promise.all([ninCall(s.url, fast), ninCall(s.url, slow)]);
      for (let i = 0; i < 2; i++) {
        const [f, sl] = await Promise.all([ninCall(s.url, fast), ninCall(s.url, slow)]);
        expect(sl.ms).toBeGreaterThanOrEqual(slowMs - 1);
        // Ordered by events, not by a time limit: sent together, the fast NIN's answer arrives first.
        expect(f.ended).toBeLessThan(sl.ended);
      }
    });
  });

  it('When phone and demographic lookups are made, then each takes at least the draw seeded by its query', async () => {
    const d = { medianMs: 60, p95Ms: 200 };
    await withSim({ latency: d }, async (s) => {
      const phone = await call(s.url, '/v1/phone', { phone: '08031234567', reason: REASON });
      expect(phone.status).toBe(200);
      expect(phone.ms).toBeGreaterThanOrEqual(latencyFor('phone:08031234567', d) - 1);
      const demo = await call(s.url, '/v1/demography', { firstname: ' Ngozi', lastname: 'Okafor', dob: '07-09-1984', gender: 'F', reason: REASON });
      expect(demo.status).toBe(200);
      expect(demo.ms).toBeGreaterThanOrEqual(latencyFor(`demography:${demographySeed('Ngozi', 'Okafor', '07-09-1984', 'f')}`, d) - 1);
    });
  });

  it('When both a fixed latency and a distribution are set, then lookups take their draw and the reasons list the fixed latency', async () => {
    const d = { medianMs: 5, p95Ms: 10 };
    const nin = nins.find((n) => latencyFor(`nin:${n}`, d) <= 10) as string;
    await withSim({ latencyMs: 250, latency: d }, async (s) => {
      const [lookup, reasons] = await Promise.all([ninCall(s.url, nin), call(s.url, '/v1/reasons')]);
      expect(lookup.status).toBe(200);
      expect(reasons.status).toBe(200);
      expect(reasons.ms).toBeGreaterThanOrEqual(249);
      // Sent together, the lookup (its draw, at most 10 ms) answers before the reasons (the fixed 250 ms).
      expect(lookup.ended).toBeLessThan(reasons.ended);
    });
  });
});

/** Waits until `ms` into the next wall-clock second (the simulator's buckets are epoch seconds). */
function untilIntoSecond(ms: number): Promise<void> {
  return sleep(1000 - (Date.now() % 1000) + ms);
}

/** Waits until `ms` into a wall-clock second: this one if that is still ahead, else the next. */
function atMsIntoSecond(ms: number): Promise<void> {
  const into = Date.now() % 1000;
  return sleep(into <= ms ? ms - into : 1000 - into + ms);
}

describe('identity simulator limits per API key', () => {
  const KEY = { authorization: `Bearer ${API_KEY}` };

  it('When three times the rate limit arrives in a burst, then each second accepts exactly the limit and the rest get 429 with Retry-After', async () => {
    await withSim({ apiKey: API_KEY, rateLimit: 10 }, async (s) => {
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => ninCall(s.url, `1234567${String(i).padStart(4, '0')}`, KEY)));
      const ok = answers.filter((a) => a.status === 200);
      const limited = answers.filter((a) => a.status === 429);
      expect(ok.length + limited.length).toBe(30);
      for (const a of limited) {
        expect(a.retryAfter).toBe('1');
        expect(a.body).toEqual({ status: false, message: 'Too many requests' });
      }

      const st = s.stats();
      expect(st).toMatchObject({ calls: 30, accepted: ok.length, rateLimited: limited.length, concurrencyLimited: 0 });
      expect(st.statuses).toEqual({ '200': ok.length, '429': limited.length });
      expect(st.seconds.reduce((n, b) => n + b.received, 0)).toBe(30);
      // A call is refused only when its second already holds the limit, so every second that
      // refused one accepted exactly 10.
      for (const b of st.seconds) {
        expect(b.accepted).toBeLessThanOrEqual(10);
        if (b.limited > 0) expect(b.accepted).toBe(10);
      }
      expect(st.seconds.some((b) => b.limited > 0)).toBe(true);

      await untilIntoSecond(20);
      expect((await ninCall(s.url, '12345678901', KEY)).status).toBe(200);
    });
  });

  it('When no API key is configured, then each presented bearer and the anonymous caller have their own limit', async () => {
    await withSim({ rateLimit: 2 }, async (s) => {
      await atMsIntoSecond(20);
      const callers: Record<string, string>[] = [{ authorization: 'Bearer a' }, { authorization: 'Bearer b' }, {}];
      const answers = await Promise.all(callers.flatMap((h) => [0, 1, 2].map((i) => ninCall(s.url, `2222222222${i}`, h))));
      const statuses = callers.map((_, c) => answers.slice(c * 3, c * 3 + 3).map((a) => a.status).sort());
      expect(statuses).toEqual([
        [200, 200, 429],
        [200, 200, 429],
        [200, 200, 429],
      ]);
    });
  });

  it('When the sliding window is chosen, then a burst straddling a second boundary is refused until a second after the first calls', async () => {
    await withSim({ apiKey: API_KEY, rateLimit: 5, rateWindow: 'sliding' }, async (s) => {
      await atMsIntoSecond(850);
      const boundary = Math.ceil(Date.now() / 1000) * 1000;
      const first = await Promise.all(Array.from({ length: 5 }, () => ninCall(s.url, '12345678901', KEY)));
      expect(first.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
      const firstAt = Date.now();
      await sleep(boundary + 10 - Date.now());
      const straddling = await Promise.all(Array.from({ length: 3 }, () => ninCall(s.url, '12345678901', KEY)));
      expect(straddling.map((a) => [a.status, a.retryAfter])).toEqual([
        [429, '1'],
        [429, '1'],
        [429, '1'],
      ]);
      await sleep(firstAt + 1000 - Date.now() + 20);
      expect((await ninCall(s.url, '12345678901', KEY)).status).toBe(200);
      for (const b of s.stats().seconds) expect(b.accepted).toBeLessThanOrEqual(5);
    });
  });

  it('When more calls are in flight than the cap, then the extra ones get 429 at once and later calls are admitted again', async () => {
    await withSim({ apiKey: API_KEY, maxConcurrency: 3, latencyMs: 300 }, async (s) => {
      const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => ninCall(s.url, `1234567890${i}`, KEY)));
      const ok = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status === 429);
      expect(ok).toHaveLength(3);
      expect(refused).toHaveLength(2);
      for (const a of refused) {
        expect(a.retryAfter).toBe('1');
        expect(a.body).toEqual({ status: false, message: 'Too many concurrent requests' });
        // At once: every refusal arrives before any admitted call (each held 300 ms) answers.
        for (const o of ok) expect(a.ended).toBeLessThan(o.ended);
      }
      expect(s.stats()).toMatchObject({ calls: 5, accepted: 3, inFlight: 0, peakConcurrency: 3, concurrencyLimited: 2, rateLimited: 0 });

      expect((await ninCall(s.url, '12345678901', KEY)).status).toBe(200);
      // The reasons list is not a lookup: no cap, no rate limit.
      const reasons = await Promise.all(Array.from({ length: 5 }, () => call(s.url, '/v1/reasons', undefined, KEY)));
      expect(reasons.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    });
  });
});

describe('identity simulator outages', () => {
  it('When a 503 outage runs, then lookups answer 503 at once until it ends, and found again after', async () => {
    await withSim({ latencyMs: 200 }, async (s) => {
      const { until } = s.outage({ mode: '503', forMs: 600 });
      expect(until).toBeGreaterThan(Date.now());
      const [down, held] = await Promise.all([ninCall(s.url, '12345678901'), call(s.url, '/v1/reasons')]);
      expect(down).toMatchObject({ status: 503, body: { status: false, message: 'Service temporarily unavailable' } });
      // At once: sent beside a call that waits the 200 ms latency, the refusal arrives first.
      expect(held.status).toBe(200);
      expect(held.ms).toBeGreaterThanOrEqual(199);
      expect(down.ended).toBeLessThan(held.ended);
      expect((await call(s.url, '/v1/phone', { phone: '08031234567', reason: REASON })).status).toBe(503);

      await sleep((until ?? 0) - Date.now() + 10);
      expect((await ninCall(s.url, '12345678901')).status).toBe(200);
      expect(s.stats()).toMatchObject({ calls: 4, accepted: 1, outage503: 2, statuses: { '200': 2, '503': 2 } });
    });
  });

  it('When a hang outage runs, then lookups are held without an answer and all get 504 when it ends; a client that leaves is let go', async () => {
    await withSim({}, async (s) => {
      const { until } = s.outage({ mode: 'hang', forMs: 700 });
      const early = ninCall(s.url, '12345678901');
      const leaver = new AbortController();
      const left = ninCall(s.url, '12345678902', {}, leaver.signal).catch((e: unknown) => e);
      await sleep(200);
      const late = ninCall(s.url, '12345678903');
      leaver.abort();
      expect(await left).toBeInstanceOf(Error);

      for (const answer of await Promise.all([early, late])) {
        expect(answer).toMatchObject({ status: 504, body: { status: false, message: 'Upstream timeout' } });
      }
      expect(Date.now()).toBeGreaterThanOrEqual((until ?? 0) - 5);
      expect((await ninCall(s.url, '12345678901')).status).toBe(200);
      expect(s.stats()).toMatchObject({ calls: 4, accepted: 1, outageHeld: 3, statuses: { '200': 1, '504': 2 } });
    });
  });

  it('When an outage is ended early, then held lookups get their 504 at once and new ones are answered', async () => {
    await withSim({}, async (s) => {
      s.outage({ mode: 'hang', forMs: 30_000 });
      const held = ninCall(s.url, '12345678901');
      await waitFor(() => s.stats().outageHeld === 1, { what: 'the lookup held by the outage' });
      expect(s.outage({ mode: 'none' })).toEqual({ mode: 'none', until: null });
      const answer = await held;
      expect(answer.status).toBe(504);
      expect(answer.ms).toBeLessThan(5_000);
      expect((await ninCall(s.url, '12345678901')).status).toBe(200);
    });
  });
});

describe('identity simulator counters and control API', () => {
  it('When stats are reset, then every counter starts again from zero', async () => {
    await withSim({ maxConcurrency: 1, latencyMs: 50 }, async (s) => {
      await Promise.all([ninCall(s.url, '12345678901'), ninCall(s.url, '12345678902')]);
      expect(s.stats()).toMatchObject({ calls: 2, accepted: 1, concurrencyLimited: 1, peakConcurrency: 1 });
      s.resetStats();
      expect(s.stats()).toEqual({
        calls: 0, accepted: 0, inFlight: 0, peakConcurrency: 0, rateLimited: 0, concurrencyLimited: 0,
        outage503: 0, outageHeld: 0, statuses: {}, seconds: [],
      });
    });
  });

  it('When the control API is called without its header, then it answers 403, and even the authority key does not open it', async () => {
    await withSim({ apiKey: API_KEY }, async (s) => {
      const attempts: Record<string, string>[] = [{}, { authorization: `Bearer ${API_KEY}` }, { 'x-sim-control': 'wrong' }];
      for (const headers of attempts) {
        const a = await call(s.url, '/__sim/stats', undefined, headers);
        expect(a).toMatchObject({ status: 403, body: { status: false, message: 'Simulator control needs the X-Sim-Control header' } });
      }
      expect(await call(s.url, '/__sim/stats', undefined, { 'x-sim-control': 'sim-control' })).toMatchObject({ status: 200, body: { calls: 0 } });
      expect(s.stats().calls).toBe(0);
    });
  });

  it('When a benchmark drives the simulator over its control API, then config, outage, stats and reset work and are never counted as calls', async () => {
    await withSim({ apiKey: API_KEY, controlToken: 'bench-token' }, async (s) => {
      const ctl = { 'x-sim-control': 'bench-token' };
      const key = { authorization: `Bearer ${API_KEY}` };
      const set = await call(s.url, '/__sim/config', { rateLimit: 1, latency: { medianMs: 1200, p95Ms: 4000 } }, ctl);
      expect(set).toMatchObject({ status: 200, body: { settings: { rateLimit: 1, latency: { medianMs: 1200, p95Ms: 4000 }, latencyMs: 0 }, outage: { mode: 'none', until: null } } });
      expect(await call(s.url, '/__sim/config', { rateLimit: -1 }, ctl)).toMatchObject({ status: 400, body: { status: false, message: 'Invalid control request: rateLimit' } });
      expect(await call(s.url, '/__sim/config', { latency: { medianMs: 100, p95Ms: 50 } }, ctl)).toMatchObject({ status: 400 });
      expect(await call(s.url, '/__sim/config', { latency: null, rateLimit: 0 }, ctl)).toMatchObject({ status: 200, body: { settings: { latency: null, rateLimit: 0 } } });

      const outage = await call(s.url, '/__sim/outage', { mode: '503', forMs: 60_000 }, ctl);
      expect(outage).toMatchObject({ status: 200, body: { mode: '503' } });
      expect((await ninCall(s.url, '12345678901', key)).status).toBe(503);
      expect(await call(s.url, '/__sim/outage', { mode: 'sideways', forMs: 1 }, ctl)).toMatchObject({ status: 400 });
      expect(await call(s.url, '/__sim/outage', { mode: 'none' }, ctl)).toMatchObject({ status: 200, body: { mode: 'none', until: null } });
      expect((await ninCall(s.url, '12345678901', key)).status).toBe(200);

      const stats = await call(s.url, '/__sim/stats', undefined, ctl);
      expect(stats).toMatchObject({ status: 200, body: { calls: 2, accepted: 1, outage503: 1, statuses: { '200': 1, '503': 1 } } });
      expect(await call(s.url, '/__sim/reset', {}, ctl)).toMatchObject({ status: 200, body: { calls: 0, seconds: [] } });
      expect(await call(s.url, '/__sim/nothing', undefined, ctl)).toMatchObject({ status: 404, body: { status: false, message: 'No such control endpoint' } });
      expect(s.stats().calls).toBe(0);
    });
  });

  it('When configure() gets an impossible value, then it throws and keeps the previous settings', async () => {
    await withSim({ rateLimit: 7 }, async (s) => {
      expect(() => s.configure({ latency: { medianMs: 50, p95Ms: 10 } })).toThrow();
      expect(() => s.configure({ maxConcurrency: 1.5 })).toThrow();
      expect(s.settings()).toMatchObject({ rateLimit: 7, latency: null, maxConcurrency: 0 });
      expect(s.configure({ maxConcurrency: 4 })).toMatchObject({ rateLimit: 7, maxConcurrency: 4 });
    });
  });
});
