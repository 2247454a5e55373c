import { randomBytes } from 'node:crypto';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/modules/organisations/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

let stack: Stack;
let org: OrgFixture;
let finance: string;

const ACCOUNTS_ONLY = { detail: 'Only organisation administrators and finance officers may do this' };
const ADMINS_ONLY = { detail: 'Only organisation administrators may do this' };
const lacks = (scope: string) => ({ detail: `This token lacks the scope ${scope}`, code: 'insufficient_scope' });

beforeAll(async () => {
  stack = await startStack({ workers: false, env: { RATE_LIMIT_PER_TOKEN: '10000', RATE_LIMIT_PER_ORG: '10000' } });
  org = await stack.createOrg({ units: 40 });
  const user = { username: `i34-finance-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
  await createUser(stack.db, { orgId: org.orgId, ...user, role: 'finance', requirePasswordChange: false });
  finance = await stack.login(user.username, user.password);
});
afterAll(async () => stack?.close());

type Row = { method: string; path: string; json?: unknown; form?: Record<string, string | number>; status: number; body?: unknown };

/** What the finance role may do (the money and the history) and may not (verify, batches, team, API clients, settings). */
const ROUTES: Row[] = [
  { method: 'GET', path: '/v1/topup/quote?units=100', status: 200 },
  { method: 'POST', path: '/v1/topup/initialize', form: { units: 100 }, status: 200 },
  { method: 'GET', path: '/v1/topups', status: 200 },
  { method: 'GET', path: '/v1/transactions', status: 200 },
  { method: 'GET', path: '/v1/usage/daily', status: 200 },
  { method: 'GET', path: '/v1/audit-events', status: 200 },
  { method: 'GET', path: '/v1/verifications', status: 200 },
  { method: 'GET', path: '/v1/verify-nin/batches', status: 200 },
  { method: 'POST', path: '/v1/verify-nin', json: { nin: '12345678901', reason: 'corporate' }, status: 403, body: lacks('verify') },
  { method: 'POST', path: '/v1/verify-nin/phone', json: { phone: '08012345678', reason: 'corporate' }, status: 403, body: lacks('verify') },
  { method: 'POST', path: '/v1/verify-nin/requery', json: { reference_id: 'REF-AAAAAAAAAAAA' }, status: 403, body: lacks('requery') },
  { method: 'POST', path: '/v1/verify-nin/batches', json: {}, status: 403, body: lacks('verify') },
  { method: 'GET', path: '/v1/team', status: 403, body: ADMINS_ONLY },
  { method: 'POST', path: '/v1/team/invitations', json: { username: 'i34-nobody', email: 'nobody@example.com', role: 'member' }, status: 403, body: ADMINS_ONLY },
  { method: 'GET', path: '/v1/api-clients', status: 403, body: ADMINS_ONLY },
  { method: 'POST', path: '/v1/api-clients', json: { name: 'i34', role: 'finance' }, status: 403, body: ADMINS_ONLY },
  { method: 'PATCH', path: '/v1/me/organisation', json: { require_mfa: true }, status: 403, body: ADMINS_ONLY },
];

describe('the finance role', () => {
  it('a finance user tops up and reads balances, top-ups, the ledger, usage, history and the audit trail, and is refused verifying, batches, the team, API clients and settings with a 403 detail', async () => {
    const seen: unknown[] = [];
    const want: unknown[] = [];
    for (const row of ROUTES) {
      const r = await stack.api(row.method, row.path, { token: finance, ...(row.json !== undefined ? { json: row.json } : {}), ...(row.form ? { form: row.form } : {}) });
      seen.push({ route: `${row.method} ${row.path}`, status: r.status, ...(row.body ? { body: r.body } : {}) });
      want.push({ route: `${row.method} ${row.path}`, status: row.status, ...(row.body ? { body: row.body } : {}) });
    }
    expect(seen).toEqual(want);
    // Nothing was looked up or charged for the refused verification.
    expect(await stack.db.oneFirst(sql.unsafe`SELECT count(*)::int FROM verifications WHERE org_id = ${org.orgId}`)).toBe(0);
    const me = await stack.api('GET', '/v1/me', { token: finance });
    expect(me.body).toMatchObject({ role: 'finance', organisation: { units: 40, unit_cost: expect.any(Number) } });
  });

  it('the top-up a finance user started is theirs to read back; a member may not read it', async () => {
    const made = await stack.api('POST', '/v1/topup/initialize', { token: finance, form: { units: 100 } });
    expect(made.status).toBe(200);
    const ref = made.body.reference as string;
    expect((await stack.api('GET', `/v1/topups/${ref}`, { token: finance })).status).toBe(200);
    // A member still may not.
    expect((await stack.api('GET', `/v1/topups/${ref}`, { token: org.member.token })).body).toEqual(ACCOUNTS_ONLY);
  });

  it('members see the balance (not the price); a member is refused the money routes with the detail naming who may', async () => {
    const me = await stack.api('GET', '/v1/me', { token: org.member.token });
    expect(me.body.organisation.units).toBe(40);
    expect(me.body.organisation.unit_cost).toBeUndefined();
    for (const path of ['/v1/topups', '/v1/transactions', '/v1/audit-events', '/v1/topup/quote?units=100']) {
      const r = await stack.api('GET', path, { token: org.member.token });
      expect({ path, status: r.status, body: r.body }).toEqual({ path, status: 403, body: ACCOUNTS_ONLY });
    }
  });

  it('an administrator may invite a finance team member and make a finance API client holding the topup scope', async () => {
    const member = await stack.api('POST', '/v1/team/invitations', { token: org.admin.token, json: { username: `i34-fin-${randomBytes(3).toString('hex')}`, email: 'fin@example.com', role: 'finance' } });
    expect({ status: member.status, role: member.body.role }).toEqual({ status: 201, role: 'finance' });
    const client = await stack.api('POST', '/v1/api-clients', { token: org.admin.token, json: { name: 'i34 finance client', role: 'finance', scopes: ['topup', 'history:read'] } });
    expect(client.status).toBe(201);
    const token = await stack.api('POST', '/v1/login', { form: { grant_type: 'client_credentials', client_id: client.body.client_id, client_secret: client.body.client_secret } });
    expect(token.status).toBe(200);
    expect((await stack.api('GET', '/v1/topup/quote?units=100', { token: token.body.access_token })).status).toBe(200);
    expect((await stack.api('POST', '/v1/verify-nin', { token: token.body.access_token, json: { nin: '12345678901', reason: 'corporate' } })).status).toBe(403);
  });

  it('a refused caller learns it is refused (403) before anything about its body: with no body, an empty one, or a bad one', async () => {
    const refused: [string, string, string, typeof ADMINS_ONLY][] = [
      ['finance', 'POST', '/v1/team/invitations', ADMINS_ONLY],
      ['finance', 'PATCH', '/v1/team/1', ADMINS_ONLY],
      ['finance', 'POST', '/v1/api-clients', ADMINS_ONLY],
      ['finance', 'PATCH', '/v1/me/organisation', ADMINS_ONLY],
      ['member', 'PUT', '/v1/settings/auto-topup', ACCOUNTS_ONLY],
      ['member', 'POST', '/v1/team/invitations', ADMINS_ONLY],
    ];
    for (const [who, method, path, body] of refused) {
      const token = who === 'finance' ? finance : org.member.token;
      const none = await fetch(`${stack.url}${path}`, { method, headers: { authorization: `Bearer ${token}` } });
      expect({ who, method, path, status: none.status, body: await none.json() }).toEqual({ who, method, path, status: 403, body });
      for (const json of [{}, { nonsense: true }]) {
        const r = await stack.api(method, path, { token, json });
        expect({ who, method, path, status: r.status, body: r.body }).toEqual({ who, method, path, status: 403, body });
      }
    }
  });
});
