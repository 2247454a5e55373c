import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient } from '../../clients/typescript/src/index.ts';
import { hashPassword } from '../../src/lib/passwords.ts';
import { createUser, seedSandbox, setUserDisabled } from '../../src/modules/organisations/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

const run = promisify(execFile);
const q = sql.type(z.record(z.string(), z.any()));
const MAX_FAILURES = 4;

let stack: Stack;
let seeded: NonNullable<Awaited<ReturnType<typeof seedSandbox>>>;
let org: OrgFixture;

beforeAll(async () => {
  stack = await startStack({ workers: false, env: { LOGIN_MAX_FAILURES: String(MAX_FAILURES) } });
  // First, while the database has no user at all: the sandbox's demo accounts, as `npm start` makes them.
  seeded = (await seedSandbox(stack.db, stack.config))!;
  org = await stack.createOrg({ units: 10 });
});
afterAll(async () => stack?.close());

const suffix = () => randomBytes(4).toString('hex');
const me = (token: string) => stack.api('GET', '/v1/me', { token });
const changePassword = (token: string, json: unknown) => stack.api('POST', '/v1/change-password', { token, json });
const loginAnswer = (username: string, password: string) => stack.api('POST', '/v1/login', { form: { username, password } });

/** An organisation user created the way an administrator or the operator creates one (default: asked to change). */
async function newUser(o: { role?: 'org_admin' | 'member'; requirePasswordChange?: boolean } = {}) {
  const u = { username: `user-${suffix()}`, password: `initial-${suffix()}` };
  await createUser(stack.db, { orgId: org.orgId, ...u, role: o.role ?? 'member', requirePasswordChange: o.requirePasswordChange });
  return u;
}

describe('POST /change-password', () => {
  it('When the current password is right, then 200 "Password changed", every earlier token (the calling one included) gets 401 and the new password logs in', async () => {
    const u = await newUser({ requirePasswordChange: false });
    const first = await stack.login(u.username, u.password);
    const second = await stack.login(u.username, u.password);
    const r = await changePassword(first, { current_password: u.password, new_password: 'a-brand-new-secret' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ detail: 'Password changed' });
    for (const token of [first, second]) {
      const after = await me(token);
      expect(after.status).toBe(401);
      expect(after.body.detail).toBe('Could not validate credentials');
    }
    expect((await loginAnswer(u.username, u.password)).status).toBe(401);
    const fresh = await stack.login(u.username, 'a-brand-new-secret');
    expect((await me(fresh)).status).toBe(200);
  });

  it('When the new password breaks a rule, then 400 naming the rule and the password is unchanged', async () => {
    const u = await newUser({ requirePasswordChange: false });
    const token = await stack.login(u.username, u.password);
    const cases: [string, string][] = [
      ['short', 'New password must be at least 8 characters'],
      [u.username.toUpperCase(), 'New password must not be the username'],
      [u.password, 'New password must not be the current password'],
    ];
    for (const [newPassword, detail] of cases) {
      const r = await changePassword(token, { current_password: u.password, new_password: newPassword });
      expect(r.status, detail).toBe(400);
      expect(r.body).toEqual({ detail });
    }
    expect((await me(token)).status).toBe(200);
  });

  it('When a field is missing or of the wrong type, then 422 naming it; a form body gets 415; no token gets 401', async () => {
    const token = org.member.token;
    const missing = await changePassword(token, { current_password: org.member.password });
    expect(missing.status).toBe(422);
    expect(missing.body.errors[0].loc).toEqual(['new_password']);
    const wrongType = await changePassword(token, { current_password: org.member.password, new_password: 12345678 });
    expect(wrongType.status).toBe(422);
    const form = await stack.api('POST', '/v1/change-password', { token, form: { current_password: 'x', new_password: 'y' } });
    expect(form.status).toBe(415);
    const anonymous = await stack.api('POST', '/v1/change-password', { json: { current_password: 'x', new_password: 'yyyyyyyy' } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.detail).toBe('Not authenticated');
  });

  it('When the current password is wrong, then 400 and it counts as a failed sign-in: after the limit, /login for that user answers 429', async () => {
    const u = await newUser({ requirePasswordChange: false });
    const token = await stack.login(u.username, u.password);
    for (let i = 0; i < MAX_FAILURES; i++) {
      const r = await changePassword(token, { current_password: `wrong-${i}-password`, new_password: 'another-password' });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ detail: 'Current password is incorrect' });
    }
    const locked = await loginAnswer(u.username, u.password);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    const alsoHere = await changePassword(token, { current_password: u.password, new_password: 'another-password' });
    expect(alsoHere.status).toBe(429);
  });
});

describe('first login', () => {
  it('When an organisation user is created without --no-password-change, then login says require_password_change and only /me, /meorganisation, /change-password and /logout answer', async () => {
    const u = await newUser({ role: 'org_admin' });
    const answer = await loginAnswer(u.username, u.password);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ token_type: 'bearer', expires_in: 3600, require_password_change: true });
    const token = answer.body.access_token as string;

    expect((await me(token)).status).toBe(200);
    expect((await stack.api('GET', '/v1/meorganisation', { token })).status).toBe(200);
    const refused = [
      await stack.api('POST', '/v1/verify-nin', { token, json: { nin: '12345678901', reason: 'corporate' } }),
      // The requery reads its principal with the row: refused the same way, before the row is used.
      await stack.api('POST', '/v1/verify-nin/requery', { token, json: { reference_id: 'REF-AAAAAAAAAAAA' } }),
      await stack.api('GET', '/v1/nimc-reasons', { token }),
      await stack.api('POST', '/v1/topup/initialize', { token, form: { units: 100 } }),
      await stack.api('GET', '/v1/api-clients', { token }),
      await stack.api('GET', '/nimc-reasons', { token }),
    ];
    for (const r of refused) {
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ detail: 'Password change required' });
    }

    const changed = await changePassword(token, { current_password: u.password, new_password: 'my-own-password-1' });
    expect(changed.status).toBe(200);
    const again = await loginAnswer(u.username, 'my-own-password-1');
    expect(again.status).toBe(200);
    expect(again.body).not.toHaveProperty('require_password_change');
    const r = await stack.api('POST', '/v1/verify-nin', { token: again.body.access_token, json: { nin: '12345678901', reason: 'corporate' } });
    expect(r.status).toBe(200);
  });

  it('When a first-login token logs out, then 204 and it stops working', async () => {
    const u = await newUser();
    const token = (await loginAnswer(u.username, u.password)).body.access_token as string;
    expect((await stack.api('POST', '/v1/logout', { token })).status).toBe(204);
    expect((await me(token)).status).toBe(401);
  });

  it('When the account is a sandbox demo account, a platform administrator, a user created with requirePasswordChange false, or one that existed before, then login never asks', async () => {
    const ops = { username: `ops-${suffix()}`, password: `ops-pass-${suffix()}` };
    await createUser(stack.db, { orgId: null, ...ops, role: 'platform_admin' });
    const quiet = await newUser({ requirePasswordChange: false });
    // A row written as before this change (no must_change_password given): the column's default.
    const old = { username: `old-${suffix()}`, password: `old-pass-${suffix()}` };
    await stack.db.query(sql.unsafe`
      INSERT INTO users (org_id, username, password_hash, role) VALUES (${org.orgId}, ${old.username}, ${await hashPassword(old.password)}, 'member')`);
    const pairs = [seeded.admin, seeded.member, ops, quiet, old];
    for (const p of pairs) {
      const r = await loginAnswer(p.username, p.password);
      expect(r.status, p.username).toBe(200);
      expect(r.body).not.toHaveProperty('require_password_change');
    }
    // The quick start's own call, as the demo administrator.
    const token = await stack.login(seeded.admin.username, seeded.admin.password);
    expect((await stack.api('POST', '/v1/verify-nin', { token, json: { nin: '12345678901', reason: 'corporate' } })).status).toBe(200);
  });

  it('When the operator runs user:create, then the user is asked at first login, unless --no-password-change; --email is stored', async () => {
    const admin = async (...args: string[]) => {
      const r = await run(process.execPath, ['src/cli/admin.ts', ...args], { env: { ...process.env, DATABASE_URL: stack.config.DATABASE_URL, LOG_LEVEL: 'silent' } });
      return JSON.parse(r.stdout.trim().split('\n').at(-1)!);
    };
    const asked = `cli-${suffix()}`;
    const quiet = `cli-${suffix()}`;
    const a = await admin('user:create', '--org', String(org.orgId), '--username', asked, '--password', 'operator-chosen', '--role', 'member', '--email', `${asked}@example.com`);
    expect(a).toMatchObject({ username: asked, email: `${asked}@example.com`, must_change_password: true });
    const b = await admin('user:create', '--org', String(org.orgId), '--username', quiet, '--password', 'operator-chosen', '--role', 'member', '--no-password-change');
    expect(b).toMatchObject({ username: quiet, must_change_password: false });
    expect((await loginAnswer(asked, 'operator-chosen')).body.require_password_change).toBe(true);
    expect((await loginAnswer(quiet, 'operator-chosen')).body).not.toHaveProperty('require_password_change');
  });
});

describe('POST /logout and ending tokens', () => {
  it('When a token logs out, then 204, that token gets 401 at once and another token of the same user still works', async () => {
    const u = await newUser({ requirePasswordChange: false });
    const [a, b] = [await stack.login(u.username, u.password), await stack.login(u.username, u.password)];
    const out = await stack.api('POST', '/v1/logout', { token: a });
    expect(out.status).toBe(204);
    expect(out.text).toBe('');
    const after = await me(a);
    expect(after.status).toBe(401);
    expect(after.body.detail).toBe('Could not validate credentials');
    expect((await stack.api('POST', '/logout', { token: a })).status).toBe(401);
    expect((await me(b)).status).toBe(200);
  });

  it('When a user is disabled and enabled again, then the tokens issued before stay dead', async () => {
    const u = await newUser({ requirePasswordChange: false });
    const token = await stack.login(u.username, u.password);
    await setUserDisabled(stack.db, { username: u.username }, true);
    expect((await me(token)).status).toBe(401);
    await setUserDisabled(stack.db, { username: u.username }, false);
    expect((await me(token)).status).toBe(401);
    expect((await me(await stack.login(u.username, u.password))).status).toBe(200);
  });

  it("When a user's role changes (even back again), then the tokens issued before get 401", async () => {
    const u = await newUser({ requirePasswordChange: false });
    const token = await stack.login(u.username, u.password);
    await stack.db.query(sql.unsafe`UPDATE users SET role = 'org_admin' WHERE username = ${u.username}`);
    await stack.db.query(sql.unsafe`UPDATE users SET role = 'member' WHERE username = ${u.username}`);
    expect((await me(token)).status).toBe(401);
    const row = await stack.db.one(q`SELECT token_version FROM users WHERE username = ${u.username}`);
    expect(row.token_version).toBe(2);
  });

  it('When the typed client is used, then changePassword and logout work as the endpoints do', async () => {
    const u = await newUser({ requirePasswordChange: false });
    const client = createClient({ baseUrl: stack.url });
    await client.login(u.username, u.password);
    expect(await client.changePassword({ current_password: u.password, new_password: 'typed-new-password' })).toEqual({ detail: 'Password changed' });
    await expect(client.me()).rejects.toMatchObject({ status: 401 });
    await client.login(u.username, 'typed-new-password');
    expect((await client.me()).username).toBe(u.username);
    await client.logout();
    expect(await client.forgotPassword(u.username)).toEqual({ detail: 'If the account exists, a reset link has been sent' });
  });

  it('When GET /me is called by a user, then the answer keeps its shape (id, username, role, two-factor state, organisation)', async () => {
    const r = await me(org.member.token);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['id', 'mfa_enabled', 'organisation', 'role', 'username']);
  });
});
