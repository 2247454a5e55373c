import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../clients/typescript/src/index.ts';
import { addLifetimeUnits, createUser, deleteOrganisation } from '../../src/modules/organisations/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

let stack: Stack;
let platformToken: string;
let hosted: OrgFixture;
let gold: OrgFixture;
let diamond: OrgFixture;
let bigHosted: OrgFixture;
let topup: { reference: string; total_amount: number };

const FORBIDDEN = { detail: 'Only platform administrators may do this' };
const get = (path: string, token?: string) => stack.api('GET', path, { token });

beforeAll(async () => {
  stack = await startStack();
  const admin = { username: `platform-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
  await createUser(stack.db, { orgId: null, ...admin, role: 'platform_admin' });
  platformToken = await stack.login(admin.username, admin.password);
  [hosted, gold, diamond, bigHosted] = await Promise.all([
    stack.createOrg({ tenancy: 'hosted' }),
    stack.createOrg({ tenancy: 'self-hosted', units: 7 }),
    stack.createOrg({ tenancy: 'self-hosted' }),
    stack.createOrg({ tenancy: 'hosted' }),
  ]);
  // Lifetime units come from credited top-ups; these stand for years of them.
  await addLifetimeUnits(stack.db, gold.orgId, 30_000);
  await addLifetimeUnits(stack.db, diamond.orgId, 50_000);
  await addLifetimeUnits(stack.db, bigHosted.orgId, 60_000);

  const init = await stack.api('POST', '/v1/topup/initialize', { token: hosted.admin.token, form: { units: 200 } });
  expect(init.status).toBe(200);
  topup = init.body;
  const paid = await fetch(`${stack.paymentSim.url}/__sim/transactions/${topup.reference}/pay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(paid.status).toBe(200);
  await waitFor(async () => (await get('/v1/me', hosted.admin.token)).body.organisation.units === 200, { what: 'the top-up credited' });
});
afterAll(async () => stack?.close());

describe('GET /platform/organisations', () => {
  it('When an organisation administrator or member asks, then 403; without a token, 401', async () => {
    for (const token of [hosted.admin.token, hosted.member.token, gold.admin.token]) {
      for (const path of ['/v1/platform/organisations', `/v1/platform/organisations/${hosted.orgId}`, `/platform/organisations/${hosted.orgId}`]) {
        const r = await get(path, token);
        expect(r.status, path).toBe(403);
        expect(r.body).toEqual(FORBIDDEN);
      }
    }
    const anonymous = await get('/v1/platform/organisations');
    expect(anonymous.status).toBe(401);
  });

  it('When a platform administrator lists, then each organisation shows balance, reserved, lifetime units, badge, subscription, tenancy, users and last top-up', async () => {
    const r = await get('/v1/platform/organisations', platformToken);
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.body.next_cursor).toBeNull();
    const byId = new Map<number, any>(r.body.data.map((o: any) => [o.id, o]));
    const h = byId.get(hosted.orgId);
    expect(h).toMatchObject({
      tenancy: 'hosted',
      affiliate: false,
      subscription_active: true,
      units: 200,
      reserved_units: 0,
      lifetime_units: 200,
      loyalty_badge: null,
      deleted_at: null,
      last_topup: {
        reference: topup.reference,
        units: 200,
        bonus_units: 0,
        total_amount: topup.total_amount,
        paid_amount: topup.total_amount,
        currency: 'NGN',
        created_at: expect.any(String),
        credited_at: expect.any(String),
      },
    });
    expect(h.users).toEqual([
      { id: expect.any(Number), username: hosted.admin.username, email: hosted.admin.username, role: 'org_admin', disabled: false },
      { id: expect.any(Number), username: hosted.member.username, email: null, role: 'member', disabled: false },
    ]);
    expect(byId.get(gold.orgId)).toMatchObject({ tenancy: 'self-hosted', units: 7, lifetime_units: 30_000, loyalty_badge: 'gold', last_topup: null });
    expect(byId.get(diamond.orgId)).toMatchObject({ lifetime_units: 50_000, loyalty_badge: 'diamond' });
    // Hosted tenants never get a badge, whatever they bought.
    expect(byId.get(bigHosted.orgId)).toMatchObject({ lifetime_units: 60_000, loyalty_badge: null });
    for (const o of r.body.data) for (const k of ['units', 'reserved_units', 'lifetime_units', 'unit_cost', 'min_topup_units']) expect(typeof o[k]).toBe('number');
  });

  it('When pages are followed with limit and next_cursor, then every organisation comes once, in id order', async () => {
    const all = (await get('/v1/platform/organisations?limit=200', platformToken)).body.data.map((o: any) => o.id);
    expect(all.length).toBeGreaterThanOrEqual(4);
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const r = await get(`/v1/platform/organisations?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, platformToken);
      expect(r.status).toBe(200);
      expect(r.body.data.length).toBeLessThanOrEqual(3);
      seen.push(...r.body.data.map((o: any) => o.id));
      cursor = r.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
  });

  it('When limit is above 200, not a positive integer, or the cursor is not one of ours, then 400', async () => {
    for (const [query, detail] of [
      ['limit=201', 'limit: limit must be an integer from 1 to 200'],
      ['limit=0', 'limit: limit must be an integer from 1 to 200'],
      ['limit=abc', 'limit: limit must be an integer from 1 to 200'],
      ['cursor=nonsense', 'cursor is not a next_cursor of this list'],
    ]) {
      const r = await get(`/v1/platform/organisations?${query}`, platformToken);
      expect(r.status, query).toBe(400);
      expect(r.body).toEqual({ detail });
    }
  });

  it('When one organisation is asked for, then it reads as in the list; an unknown id is 404', async () => {
    const list = (await get('/v1/platform/organisations', platformToken)).body.data;
    const one = await get(`/v1/platform/organisations/${gold.orgId}`, platformToken);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(list.find((o: any) => o.id === gold.orgId));
    for (const id of ['999999', 'abc', '0']) {
      const r = await get(`/v1/platform/organisations/${id}`, platformToken);
      expect(r.status, id).toBe(404);
      expect(r.body).toEqual({ detail: 'Organisation not found' });
    }
  });

  it('When an organisation is retired, then it stays in the view with deleted_at and its users disabled', async () => {
    const retired = await stack.createOrg();
    await deleteOrganisation(stack.db, retired.orgId);
    const r = await get(`/v1/platform/organisations/${retired.orgId}`, platformToken);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ subscription_active: false, deleted_at: expect.any(String) });
    expect(r.body.users.map((u: any) => u.disabled)).toEqual([true, true]);
  });

  it('When the typed client pages through the view, then it gets the same organisations', async () => {
    const client = createClient({ baseUrl: stack.url, token: platformToken });
    const first = await client.platformOrganisations({ limit: 2 });
    expect(first.data).toHaveLength(2);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await client.platformOrganisations({ limit: 2, cursor: first.next_cursor! });
    expect(second.data[0]!.id).toBeGreaterThan(first.data[1]!.id);
    expect(await client.platformOrganisation(gold.orgId)).toMatchObject({ id: gold.orgId, loyalty_badge: 'gold' });
    await expect(client.platformOrganisation(999_999)).rejects.toMatchObject({ status: 404, detail: 'Organisation not found' });
  });
});
