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

describe('POST /team', () => {
  it('When an administrator adds a member, then 201 with the user and a temporary password that signs in', async () => {
    const username = unique();
    const r = await stack.api('POST', '/v1/team', { token: org.admin.token, json: { username: username.toUpperCase(), email: `${username}@example.com`, role: 'member' } });
    expect(r.status).toBe(201);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.body).toMatchObject({ username, email: `${username}@example.com`, role: 'member', disabled: false });
    expect(typeof r.body.id).toBe('number');
    expect(r.body.temporary_password).toMatch(/^[A-Za-z0-9_-]{16}$/);
    const token = await stack.login(username, r.body.temporary_password);
    const me = await stack.api('GET', '/v1/me', { token });
    expect(me.body).toMatchObject({ username, role: 'member', organisation: { id: org.orgId } });
    const list = await stack.api('GET', '/v1/team', { token: org.admin.token });
    const listed = list.body.data.find((u: { id: number }) => u.id === r.body.id);
    expect(listed).toEqual({ id: r.body.id, username, email: `${username}@example.com`, role: 'member', disabled: false, created_at: r.body.created_at });
  });

  it('When the username is taken (in any organisation), then 409', async () => {
    const r = await stack.api('POST', '/v1/team', { token: org.admin.token, json: { username: other.member.username, email: 'x@example.com', role: 'member' } });
    expect(r.status).toBe(409);
    expect(typeof r.body.detail).toBe('string');
  });

  it('When a field is missing or the role is not member or org_admin, then 422 or 400, and nobody is created', async () => {
    const missing = await stack.api('POST', '/v1/team', { token: org.admin.token, json: { username: unique(), role: 'member' } });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toBe('Field required: email');
    const platform = await stack.api('POST', '/v1/team', { token: org.admin.token, json: { username: unique(), email: 'a@example.com', role: 'platform_admin' } });
    expect(platform.status).toBe(400);
    expect(platform.body.detail).toMatch(/^role: /);
    const badEmail = await stack.api('POST', '/v1/team', { token: org.admin.token, json: { username: unique(), email: 'not-an-address', role: 'member' } });
    expect(badEmail.status).toBe(400);
    expect(badEmail.body.detail).toBe('email: must be an e-mail address');
    const form = await stack.api('POST', '/v1/team', { token: org.admin.token, form: { username: unique(), email: 'a@example.com', role: 'member' } });
    expect(form.status).toBe(415);
  });

  it('When a team member tries to add a user, then 403 and nobody is created', async () => {
    const username = unique();
    const r = await stack.api('POST', '/v1/team', { token: org.member.token, json: { username, email: `${username}@example.com`, role: 'org_admin' } });
    expect(r.status).toBe(403);
    expect((await stack.api('POST', '/v1/login', { form: { username, password: 'whatever-it-is' } })).status).toBe(401);
  });
});

describe('PATCH /team/{id}', () => {
  async function addUser(o: OrgFixture, role: 'member' | 'org_admin') {
    const username = unique();
    const r = await stack.api('POST', '/v1/team', { token: o.admin.token, json: { username, email: `${username}@example.com`, role } });
    expect(r.status).toBe(201);
    // A member added by an administrator must replace the temporary password at first sign-in.
    const first = await stack.api('POST', '/v1/login', { form: { username, password: r.body.temporary_password } });
    expect(first.body.require_password_change).toBe(true);
    const password = `own-${Math.random().toString(36).slice(2, 10)}-pw`;
    const changed = await stack.api('POST', '/v1/change-password', {
      token: first.body.access_token,
      json: { current_password: r.body.temporary_password, new_password: password },
    });
    expect(changed.status).toBe(200);
    return { id: r.body.id as number, username, password, token: await stack.login(username, password) };
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
