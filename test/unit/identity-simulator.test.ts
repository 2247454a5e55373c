import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxAuthority } from '../../src/adapters/identity-authority/sandbox.ts';
import { UpstreamError, type IdentityAuthority, type UpstreamOutcome } from '../../src/adapters/identity-authority/types.ts';
import { normalisePerson, personRecordSchema, type PersonRecord } from '../../src/modules/verification/person.ts';
import { startIdentitySimulator, type IdentitySimulator } from '../../src/simulators/identity-authority/server.ts';

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

function foundRecord(outcome: UpstreamOutcome): PersonRecord {
  if (outcome.kind !== 'found') throw new Error(`expected found, got ${outcome.kind}`);
  return personRecordSchema.parse(normalisePerson(outcome.raw));
}

async function upstreamError(promise: Promise<unknown>): Promise<UpstreamError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof UpstreamError)) throw new Error(`expected an UpstreamError, got ${String(err)}`);
  return err;
}

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

  it('When the reasons are listed, then the SPEC keys and more are there', async () => {
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
    await new Promise((r) => setTimeout(r, 100));
    expect(held.stats().calls).toBe(1);
    const started = Date.now();
    await held.close();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await pending).toBeInstanceOf(Error);
  });
});
