import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

let stack: Stack;
let org: OrgFixture;
let other: OrgFixture;

beforeAll(async () => {
  stack = await startStack({ workers: false, env: { RATE_LIMIT_PER_TOKEN: '10000', RATE_LIMIT_PER_ORG: '10000' } });
  [org, other] = await Promise.all([stack.createOrg(), stack.createOrg()]);
});
afterAll(async () => stack?.close());

const LAST_ADMIN = "Cannot remove the organisation's last administrator";
const unique = () => `new-${Math.random().toString(36).slice(2, 10)}`;

describe('GET /team', () => {
  it("When an organisation administrator asks, then every user of the organisation is listed without password hashes", async () => {
    // An organisation of its own: other tests add users to the shared one, in any order.
    const own = await stack.createOrg();
    const r = await stack.api('GET', '/v1/team', { token: own.admin.token });
    expect(r.status).toBe(200);
    expect(r.body.data.map((u: { username: string }) => u.username).sort()).toEqual([own.admin.username, own.member.username].sort());
    for (const u of r.body.data) {
      expect(Object.keys(u).sort()).toEqual(['created_at', 'disabled', 'email', 'id', 'role', 'username']);
      expect(new Date(u.created_at).toISOString()).toBe(u.created_at);
    }
    expect(r.text).not.toMatch(/argon2|password/);
  });

  it('When a team member asks, then 403', async () => {
    const r = await stack.api('GET', '/team', { token: org.member.token });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ detail: 'Only organisation administrators may do this' });
  });

  it('When no token is sent, then 401', async () => {
    expect((await stack.api('GET', '/v1/team')).status).toBe(401);
  });
});

describe('POST /team (retired: users are added by invitation)', () => {
  const GONE = "Users are added by invitation (POST /team/invitations); a temporary password is given only by the operator's CLI (user:create)";

  it('When an administrator, a member or a finance officer posts a new user, then 410 naming the invitation, and nobody is created', async () => {
    const finance = await stack.addUser(org.orgId, { role: 'finance', keepPassword: true });
    const financeToken = await stack.login(finance.username, finance.password);
    for (const token of [org.admin.token, org.member.token, financeToken]) {
      const username = unique();
      const r = await stack.api('POST', '/v1/team', { token, json: { username, email: `${username}@example.com`, role: 'member' } });
      expect(r.status).toBe(410);
      expect(r.body).toEqual({ detail: GONE });
      expect(r.text).not.toContain('temporary_password');
      const n = await stack.db.oneFirst(sql.unsafe`SELECT count(*)::int FROM users WHERE username = ${username}`);
      expect(n).toBe(0);
    }
    // Whatever the body: the call is gone, not malformed.
    const form = await stack.api('POST', '/v1/team', { token: org.admin.token, form: { username: unique() } });
    expect(form.status).toBe(410);
  });

  it('When no token is sent, then 401; an API client gets the same 410', async () => {
    expect((await stack.api('POST', '/v1/team', { json: { username: unique(), email: 'a@example.com', role: 'member' } })).status).toBe(401);
    const client = await stack.api('POST', '/v1/api-clients', { token: org.admin.token, json: { name: 'team-410', role: 'org_admin' } });
    expect(client.status).toBe(201);
    const grant = await stack.api('POST', '/v1/login', { form: { grant_type: 'client_credentials', client_id: client.body.client_id, client_secret: client.body.client_secret } });
    const r = await stack.api('POST', '/v1/team', { token: grant.body.access_token, json: { username: unique(), email: 'a@example.com', role: 'member' } });
    expect({ status: r.status, body: r.body }).toEqual({ status: 410, body: { detail: GONE } });
  });
});

describe('PATCH /team/{id}', () => {
  async function addUser(o: OrgFixture, role: 'member' | 'org_admin') {
    const made = await stack.addUser(o.orgId, { role, username: unique() });
    // A user given a temporary password (the operator's user:create) must replace it at first sign-in.
    const first = await stack.api('POST', '/v1/login', { form: { username: made.username, password: made.password } });
    expect(first.body.require_password_change).toBe(true);
    const password = `own-${Math.random().toString(36).slice(2, 10)}-pw`;
    const changed = await stack.api('POST', '/v1/change-password', {
      token: first.body.access_token,
      json: { current_password: made.password, new_password: password },
    });
    expect(changed.status).toBe(200);
    return { id: made.id, username: made.username, password, token: await stack.login(made.username, password) };
  }

  it('When an administrator disables a member, then the member\'s token stops at once; enabling lets them sign in again', async () => {
    const u = await addUser(org, 'member');
    const off = await stack.api('PATCH', `/v1/team/${u.id}`, { token: org.admin.token, json: { disabled: true } });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ id: u.id, username: u.username, disabled: true, role: 'member' });
    expect((await stack.api('GET', '/v1/me', { token: u.token })).status).toBe(401);
    expect((await stack.api('POST', '/v1/login', { form: { username: u.username, password: u.password } })).status).toBe(401);
    const on = await stack.api('PATCH', `/team/${u.id}`, { token: org.admin.token, json: { disabled: false } });
    expect(on.body.disabled).toBe(false);
    await stack.login(u.username, u.password);
  });

  it('When a member is promoted, then the old token stops and the new role is granted at the next sign-in', async () => {
    const u = await addUser(org, 'member');
    const r = await stack.api('PATCH', `/v1/team/${u.id}`, { token: org.admin.token, json: { role: 'org_admin' } });
    expect(r.status).toBe(200);
    expect(r.body.role).toBe('org_admin');
    expect((await stack.api('GET', '/v1/me', { token: u.token })).status).toBe(401);
    const token = await stack.login(u.username, u.password);
    expect((await stack.api('GET', '/v1/team', { token })).status).toBe(200);
  });

  it("When the id is another organisation's user, unknown or not a number, then 404 and nothing changes", async () => {
    const foreign = (await stack.api('GET', '/v1/team', { token: other.admin.token })).body.data[0];
    for (const id of [String(foreign.id), '999999999', 'abc', '__proto__']) {
      const r = await stack.api('PATCH', `/v1/team/${id}`, { token: org.admin.token, json: { disabled: true } });
      expect(r.status, id).toBe(404);
      expect(r.body).toEqual({ detail: 'User not found' });
    }
    expect((await stack.api('GET', '/v1/me', { token: other.admin.token })).status).toBe(200);
  });

  it('When the body changes nothing or has a wrong type, then 400 or 422', async () => {
    const empty = await stack.api('PATCH', '/v1/team/1', { token: org.admin.token, json: {} });
    expect(empty.status).toBe(400);
    expect(empty.body.detail).toBe('send disabled, role or both');
    const typed = await stack.api('PATCH', '/v1/team/1', { token: org.admin.token, json: { disabled: 'yes' } });
    expect(typed.status).toBe(422);
  });

  it("When the last active administrator would be disabled or demoted, then 409 and the administrator keeps the role", async () => {
    const lone = await stack.createOrg();
    const team = (await stack.api('GET', '/v1/team', { token: lone.admin.token })).body.data as { id: number; username: string }[];
    const adminId = team.find((u) => u.username === lone.admin.username)!.id;
    for (const change of [{ disabled: true }, { role: 'member' }, { role: 'member', disabled: true }]) {
      const r = await stack.api('PATCH', `/v1/team/${adminId}`, { token: lone.admin.token, json: change });
      expect(r.status, JSON.stringify(change)).toBe(409);
      expect(r.body).toEqual({ detail: LAST_ADMIN });
    }
    // A disabled administrator does not count: disabling the second one leaves only the first active.
    const second = await addUser(lone, 'org_admin');
    const demoteFirst = await stack.api('PATCH', `/v1/team/${adminId}`, { token: second.token, json: { role: 'member' } });
    expect(demoteFirst.status).toBe(200);
    const last = await stack.api('PATCH', `/v1/team/${second.id}`, { token: second.token, json: { disabled: true } });
    expect(last.status).toBe(409);
    expect(last.body).toEqual({ detail: LAST_ADMIN });
    // Re-enabling or promoting never trips the rule.
    expect((await stack.api('PATCH', `/v1/team/${adminId}`, { token: second.token, json: { role: 'org_admin' } })).status).toBe(200);
  });

  it('When two administrators demote each other at the same moment, then exactly one succeeds and one administrator remains', async () => {
    for (let round = 0; round < 5; round++) {
      const o = await stack.createOrg();
      const team = (await stack.api('GET', '/v1/team', { token: o.admin.token })).body.data as { id: number; username: string }[];
      const firstId = team.find((u) => u.username === o.admin.username)!.id;
      const second = await addUser(o, 'org_admin');
      const [a, b] = await Promise.all([
        stack.api('PATCH', `/v1/team/${second.id}`, { token: o.admin.token, json: { role: 'member' } }),
        stack.api('PATCH', `/v1/team/${firstId}`, { token: second.token, json: { disabled: true } }),
      ]);
      const statuses = [a.status, b.status];
      // The loser either hits the rule (409) or finds its own token already demoted (401).
      expect(statuses.filter((s) => s === 200), JSON.stringify(statuses)).toHaveLength(1);
      expect(statuses.filter((s) => s !== 200).every((s) => s === 409 || s === 401), JSON.stringify(statuses)).toBe(true);
      const admins = await stack.db.any(sql.unsafe`SELECT id FROM users WHERE org_id = ${o.orgId} AND role = 'org_admin' AND NOT disabled`);
      expect(admins).toHaveLength(1);
    }
  });
});
