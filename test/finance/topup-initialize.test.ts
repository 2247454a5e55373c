import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeTopupPrice, defaultPricingRules } from '../../src/modules/topup/pricing.ts';
import { startStack, type Stack } from '../setup/harness.ts';
import { until } from '../setup/wait.ts';

// Test queries read loosely typed rows; the service's own queries are the typed ones.
const q = sql.type(z.record(z.string(), z.any()));

// Every test here runs on a manual clock inside the bonus period; the bonus tests move it.
const JUNE_14 = new Date('2026-06-14T12:00:00+01:00');
const JUNE_16 = new Date('2026-06-16T09:00:00+01:00');

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ manualClock: JUNE_14 });
});
afterAll(async () => stack?.close());

const initialize = (token: string, units: string | number) => stack.api('POST', '/v1/topup/initialize', { token, form: { units } });

async function units(token: string): Promise<number> {
  return (await stack.api('GET', '/v1/me', { token })).body.organisation.units;
}

describe('POST /topup/initialize', () => {
  it('When an administrator asks for 100 units, then every initialisation field is there and the amounts add up', async () => {
    const org = await stack.createOrg({ unitCostKobo: 10_000 });
    const r = await initialize(org.admin.token, 100);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const expected = computeTopupPrice({ units: 100, unitCostKobo: 10_000, tenancy: 'hosted', affiliate: false, now: JUNE_14 }, defaultPricingRules);
    expect(r.body).toEqual({
      authorization_url: expect.stringMatching(new RegExp(`^${stack.paymentSim.url}/checkout/`)),
      reference: expect.stringMatching(new RegExp(`^TOP-${org.orgId}-[0-9a-f]{16}$`)),
      access_code: expect.any(String),
      base_amount: 1_000_000,
      vat_amount: 75_000,
      service_charge: expected.service_charge,
      total_amount: expected.total_amount,
      units: 100,
      unit_cost: 10_000,
      discount: null,
      bonus_units: 0,
      currency: 'NGN',
    });
    expect(r.body.total_amount).toBe(r.body.base_amount + r.body.vat_amount + r.body.service_charge);

    const row = await stack.db.one(q`SELECT status, total_amount, access_code, authorization_url FROM topups WHERE reference = ${r.body.reference}`);
    expect(row).toMatchObject({ status: 'pending', access_code: r.body.access_code, authorization_url: r.body.authorization_url });
    expect(Number(row.total_amount)).toBe(r.body.total_amount);
    // Initializing credits nothing.
    expect(await units(org.admin.token)).toBe(0);
  });

  it('When the unversioned path is used, then it answers the same way', async () => {
    const org = await stack.createOrg();
    const r = await stack.api('POST', '/topup/initialize', { token: org.admin.token, form: { units: 200 } });
    expect(r.status).toBe(200);
    expect(r.body.units).toBe(200);
  });

  it('When units are not a positive multiple of 100, then 400 names the problem', async () => {
    const org = await stack.createOrg();
    for (const u of [150, 0, -100, '100.5']) {
      const r = await initialize(org.admin.token, u);
      expect(r.status, `units ${u}`).toBe(400);
      expect(r.body.detail).toBe('units must be a positive integer multiple of 100');
    }
  });

  it('When units are below the plan minimum, then 400 says so', async () => {
    const org = await stack.createOrg({ minTopupUnits: 500 });
    const r = await initialize(org.admin.token, 400);
    expect(r.status).toBe(400);
    expect(r.body.detail).toBe('units is below the plan minimum of 500 units');
    expect((await initialize(org.admin.token, 500)).status).toBe(200);
  });

  it('When units is not a number or is missing, then 422', async () => {
    const org = await stack.createOrg();
    const r = await initialize(org.admin.token, 'abc');
    expect(r.status).toBe(422);
    expect(r.body.detail).toMatch(/units/);
    const missing = await stack.api('POST', '/v1/topup/initialize', { token: org.admin.token, form: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toBe('Field required: units');
  });

  it('When a team member or an anonymous caller asks, then 403 and 401, and nothing is stored', async () => {
    const org = await stack.createOrg();
    expect((await initialize(org.member.token, 100)).status).toBe(403);
    expect((await stack.api('POST', '/v1/topup/initialize', { form: { units: 100 } })).status).toBe(401);
    const n = await stack.db.oneFirst(q`SELECT count(*)::int FROM topups WHERE org_id = ${org.orgId}`);
    expect(n).toBe(0);
  });

  it('When the body is JSON, then 415', async () => {
    const org = await stack.createOrg();
    const r = await stack.api('POST', '/v1/topup/initialize', { token: org.admin.token, json: { units: 100 } });
    expect(r.status).toBe(415);
    expect(r.body.detail).toBe('Content-Type must be application/x-www-form-urlencoded');
  });
});

describe('bonus units', () => {
  it('When a hosted affiliate tops up 5000 units on 14 June 2026, then 30 bonus units are quoted and credited', async () => {
    stack.clock.set!(JUNE_14);
    const org = await stack.createOrg({ tenancy: 'hosted', affiliate: true, unitCostKobo: 100 });
    const r = await initialize(org.admin.token, 5000);
    expect(r.status).toBe(200);
    expect(r.body.bonus_units).toBe(30);
    expect(r.body.base_amount).toBe(5000 * 100);
    const paid = await fetch(`${stack.paymentSim.url}/__sim/transactions/${r.body.reference}/pay`, { method: 'POST' });
    expect(paid.status).toBe(200);
    expect(await until(() => units(org.admin.token), (u) => u > 0)).toBe(5030);
    const me = await stack.api('GET', '/v1/me', { token: org.admin.token });
    // Lifetime units count what was bought, not the gift.
    expect(me.body.organisation.lifetime_units).toBe(5000);
  });

  it('When the same tenant tops up on 16 June 2026, then there is no bonus', async () => {
    stack.clock.set!(JUNE_16);
    const org = await stack.createOrg({ tenancy: 'hosted', affiliate: true, unitCostKobo: 100 });
    const r = await initialize(org.admin.token, 5000);
    expect(r.status).toBe(200);
    expect(r.body.bonus_units).toBe(0);
  });

  it('When a self-hosted affiliate tops up inside the period, then there is no bonus', async () => {
    stack.clock.set!(JUNE_14);
    const org = await stack.createOrg({ tenancy: 'self-hosted', affiliate: true, unitCostKobo: 100 });
    const r = await initialize(org.admin.token, 5000);
    expect(r.body.bonus_units).toBe(0);
    const hostedNonAffiliate = await stack.createOrg({ tenancy: 'hosted', affiliate: false, unitCostKobo: 100 });
    expect((await initialize(hostedNonAffiliate.admin.token, 5000)).body.bonus_units).toBe(0);
  });
});

describe('processor unavailable', () => {
  // A stack of its own: this test stops its payment simulator, which the other tests need.
  let down: Stack;
  beforeAll(async () => {
    down = await startStack({ manualClock: JUNE_14, workers: false });
  });
  afterAll(async () => down?.close());

  it('When the processor cannot be reached, then 503 with a clear detail and the top-up is marked failed', async () => {
    const org = await down.createOrg();
    await down.paymentSim.close();
    const r = await down.api('POST', '/v1/topup/initialize', { token: org.admin.token, form: { units: 100 } });
    expect(r.status).toBe(503);
    expect(r.body.detail).toBe('Payment processor is unavailable; nothing was charged, retry later');
    const row = await down.db.one(q`SELECT status, processor_status FROM topups WHERE org_id = ${org.orgId}`);
    expect(row).toEqual({ status: 'failed', processor_status: 'initialize_network' });
  });
});
