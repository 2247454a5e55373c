// A live verification that the wallet could not pay for gets 402, whatever the
// authority's state (admission's in-flight cap, its predicted wait, an open circuit): the most
// lasting reason wins. The burst is ordered by events: the test holds the wallet row's lock, so the
// lookups let in stay before their hold (as in a burst, where they are let in before any has held
// its unit) for exactly as long as the test needs, and the refused calls are answered meanwhile.
import pg from 'pg';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

const count = z.object({ n: z.coerce.number() });
const INSUFFICIENT = { detail: 'Insufficient units in organisation wallet' };

const verify = (stack: Stack, org: OrgFixture, nin: string) => stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin, reason: 'corporate' } });
const wallet = (stack: Stack, orgId: number) =>
  stack.db.one(sql.type(z.object({ units: z.coerce.number(), reserved: z.coerce.number() }))`SELECT units, reserved FROM wallets WHERE org_id = ${orgId}`);
const rows = (stack: Stack, orgId: number) => stack.db.oneFirst(sql.type(count)`SELECT count(*) AS n FROM verifications WHERE org_id = ${orgId}`);

/** Runs `body` while this test holds the wallet row's lock (on a connection of its own): a hold (its UPDATE) waits for the end of it. */
async function withWalletLocked<T>(stack: Stack, orgId: number, body: (waitingOnLock: () => Promise<number>) => Promise<T>): Promise<T> {
  const locker = new pg.Client({ connectionString: stack.config.DATABASE_URL });
  await locker.connect();
  try {
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM wallets WHERE org_id = $1 FOR UPDATE', [orgId]);
    // Sessions of this stack's database waiting for a lock: the holds of the lookups let in, queued
    // behind this transaction (the first waits for it, each next one for the one before).
    const waiting = () => stack.db.oneFirst(sql.type(count)`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
    return await body(waiting);
  } finally {
    await locker.query('COMMIT').catch(() => undefined);
    await locker.end();
  }
}

/**
 * A wallet of `units` and `units + extra` live calls: the first `units` are let in and wait before
 * their hold; the extra ones, refused by admission, are answered while those still wait.
 */
async function burst(stack: Stack, org: OrgFixture, units: number, extra: number, ninBase: string) {
  return withWalletLocked(stack, org.orgId, async (waitingOnLock) => {
    const letIn = Array.from({ length: units }, (_, i) => verify(stack, org, `${ninBase}${i}`));
    await waitFor(async () => (await waitingOnLock()) === units, { what: `the ${units} lookups let in to reach their hold` });
    const refused = await Promise.all(Array.from({ length: extra }, (_, i) => verify(stack, org, `${ninBase}${units + i}`)));
    return { letIn, refused };
  });
}

describe('the predicted wait', () => {
  let stack: Stack;
  beforeAll(async () => {
    // One authority slot and the default mean lookup time (1 s; no lookup has finished in this
    // stack): a lookup with two ahead is predicted to finish after 3 s, past 80 % of the 3.4 s wait,
    // so the third call and every later one is refused by admission; the first two fit (0 s, 2 s).
    stack = await startStack({ env: { IDENTITY_MAX_CONCURRENCY: '1', VERIFY_WAIT_MS: '3400', ORG_MAX_IN_FLIGHT: '100' } });
  });
  afterAll(async () => stack?.close());

  it('When 8 live calls arrive on a 2-unit wallet and admission would predict too long a wait, then 2 get 200 and 6 get 402, none 429', async () => {
    const org = await stack.createOrg({ units: 2 });
    const { letIn, refused } = await burst(stack, org, 2, 6, '2911000000');
    expect(refused.map((r) => [r.status, r.body])).toEqual(Array(6).fill([402, INSUFFICIENT]));
    expect((await Promise.all(letIn)).map((r) => r.status)).toEqual([200, 200]);
    expect(await wallet(stack, org.orgId)).toEqual({ units: 0, reserved: 0 });
    // Nothing was held or written for a refused call.
    expect(await rows(stack, org.orgId)).toBe(2);
  });
});

describe('the in-flight cap', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => stack?.close());

  it('When 6 live calls arrive on a 2-unit wallet of an organisation capped at 2 in flight, then 2 get 200 and 4 get 402, none 429', async () => {
    const org = await stack.createOrg({ units: 2, maxInFlight: 2 });
    const { letIn, refused } = await burst(stack, org, 2, 4, '2912000000');
    expect(refused.map((r) => [r.status, r.body])).toEqual(Array(4).fill([402, INSUFFICIENT]));
    expect((await Promise.all(letIn)).map((r) => r.status)).toEqual([200, 200]);
    expect(await wallet(stack, org.orgId)).toEqual({ units: 0, reserved: 0 });
    expect(await rows(stack, org.orgId)).toBe(2);
  });

  it('When a capped organisation can still pay for the call refused, then it gets 429 org_in_flight_cap as before', async () => {
    const org = await stack.createOrg({ units: 3, maxInFlight: 2 });
    const { letIn, refused } = await burst(stack, org, 2, 1, '2913000000');
    expect([refused[0]!.status, refused[0]!.body.code]).toEqual([429, 'org_in_flight_cap']);
    expect((await Promise.all(letIn)).map((r) => r.status)).toEqual([200, 200]);
    expect(await wallet(stack, org.orgId)).toEqual({ units: 1, reserved: 0 });
  });
});

describe('an open circuit', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { IDENTITY_BREAKER_MIN_CALLS: '4', IDENTITY_BREAKER_COOLDOWN_MS: '60000', IDENTITY_MAX_ATTEMPTS: '1', ORG_MAX_IN_FLIGHT: '100' } });
  });
  afterAll(async () => stack?.close());

  it('When the circuit is open, then a caller whose wallet is empty gets 402 with nothing recorded, and one who can pay gets 503', async () => {
    const payer = await stack.createOrg({ units: 10 });
    const broke = await stack.createOrg({ units: 0 });
    stack.identitySim.outage({ mode: '503', forMs: 120_000 });
    await waitFor(async () => (await verify(stack, payer, '29140000001')).body.code === 'upstream_circuit_open', { what: 'the circuit to open in the API', timeoutMs: 8000 });
    const res = await verify(stack, broke, '29140000002');
    expect([res.status, res.body]).toEqual([402, INSUFFICIENT]);
    expect(await rows(stack, broke.orgId)).toBe(0);
    // The cool-down is a minute: the circuit is still open for the payer.
    expect((await verify(stack, payer, '29140000003')).body.code).toBe('upstream_circuit_open');
    stack.identitySim.outage({ mode: 'none' });
  });
});
