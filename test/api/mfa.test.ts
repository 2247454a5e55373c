import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Secret, TOTP } from 'otpauth';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createUser } from '../../src/modules/organisations/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

let stack: Stack;
let org: OrgFixture;

// A manual clock: each test moves to the 30-second step it needs instead of waiting for one.
beforeAll(async () => {
  stack = await startStack({ workers: false, manualClock: new Date(), env: { LOGIN_MAX_FAILURES: '4', LOGIN_MAX_FAILURES_PER_ADDRESS: '1000', RATE_LIMIT_PER_TOKEN: '1000' } });
  org = await stack.createOrg();
});
afterAll(async () => stack?.close());

const codeAt = (secret: string, at: Date) => new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at.getTime() });
const now = () => stack.clock.now();
const shift = (ms: number) => new Date(now().getTime() + ms);
const nextStep = () => stack.clock.advance!(30_000);
const signIn = (u: { username: string; password: string }, otp?: string) =>
  stack.api('POST', '/v1/login', { form: { username: u.username, password: u.password, ...(otp === undefined ? {} : { otp }) } });

async function newUser(role: 'org_admin' | 'member', orgId = org.orgId) {
  const u = { username: `u-${Math.random().toString(36).slice(2, 10)}`, password: 'a-long-password-1' };
  await createUser(stack.db, { orgId, ...u, role, requirePasswordChange: false });
  return { ...u, token: await stack.login(u.username, u.password) };
}

/**
 * Enrols and confirms; answers the secret, the recovery codes and a token of a sign-in with a code
 * (turning two-factor sign-in on ended every earlier token).
 */
async function enable(token: string, user?: { username: string; password: string }) {
  const enrol = await stack.api('POST', '/v1/me/mfa/totp', { token });
  expect(enrol.status).toBe(201);
  const confirm = await stack.api('POST', '/v1/me/mfa/totp/confirm', { token, json: { code: codeAt(enrol.body.secret, now()) } });
  expect(confirm.status).toBe(200);
  nextStep();
  let fresh: string | null = null;
  if (user) {
    const signedIn = await signIn(user, codeAt(enrol.body.secret, now()));
    expect(signedIn.status).toBe(200);
    fresh = signedIn.body.access_token as string;
    nextStep();
  }
  return { secret: enrol.body.secret as string, recovery: confirm.body.recovery_codes as string[], token: fresh };
}

describe('Two-factor sign-in (TOTP)', () => {
  it('When a user turns two-factor sign-in on, then GET /me says mfa_enabled true (false before, merely enrolled included), so the portal shows it on instead of offering a set-up', async () => {
    const u = await newUser('member');
    expect((await stack.api('GET', '/v1/me', { token: u.token })).body.mfa_enabled).toBe(false);
    expect((await stack.api('POST', '/v1/me/mfa/totp', { token: u.token })).status).toBe(201);
    expect((await stack.api('GET', '/v1/me', { token: u.token })).body.mfa_enabled).toBe(false);
    const on = await enable(u.token, u);
    expect((await stack.api('GET', '/v1/me', { token: on.token! })).body.mfa_enabled).toBe(true);
  });

  it('When a user enrols, then 201 with a base32 secret and an otpauth URI (SHA-1, 6 digits, 30 s); a wrong code is 400, the right one turns it on with 10 recovery codes', async () => {
    const u = await newUser('member');
    const enrol = await stack.api('POST', '/v1/me/mfa/totp', { token: u.token });
    expect(enrol.status).toBe(201);
    expect(Object.keys(enrol.body).sort()).toEqual(['otpauth_uri', 'secret']);
    expect(enrol.body.secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(enrol.body.otpauth_uri);
    expect(uri.protocol).toBe('otpauth:');
    expect(Object.fromEntries(uri.searchParams)).toMatchObject({ secret: enrol.body.secret, algorithm: 'SHA1', digits: '6', period: '30' });
    // Stored sealed: the secret's bytes are not in the row.
    const row = await stack.db.one(sql.type(z.object({ secret_enc: z.instanceof(Buffer), key_id: z.string() }))`SELECT secret_enc, key_id FROM user_mfa WHERE user_id = (SELECT id FROM users WHERE username = ${u.username})`);
    expect(row.secret_enc.includes(Buffer.from(Secret.fromBase32(enrol.body.secret).bytes))).toBe(false);
    expect(row.key_id).toBe(stack.config.encryptionKeys[0]!.id);
    // Until confirmed, sign-in needs no code.
    expect((await signIn(u)).status).toBe(200);

    const wrong = await stack.api('POST', '/v1/me/mfa/totp/confirm', { token: u.token, json: { code: codeAt(enrol.body.secret, shift(-120_000)) } });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ detail: 'Invalid one-time code' });
    const confirm = await stack.api('POST', '/v1/me/mfa/totp/confirm', { token: u.token, json: { code: codeAt(enrol.body.secret, now()) } });
    expect(confirm.status).toBe(200);
    expect(confirm.body.recovery_codes).toHaveLength(10);
    expect(new Set(confirm.body.recovery_codes).size).toBe(10);
    // Turning it on ended the token that did it (as a password change does): a sign-in with a code.
    nextStep();
    const fresh = await signIn(u, codeAt(enrol.body.secret, now()));
    expect((await stack.api('POST', '/v1/me/mfa/totp', { token: fresh.body.access_token })).status).toBe(409);
  });

  it('When MFA is on, then sign-in without a code is 401 mfa_required, a wrong code 401, the right code 200 once (replay refused), codes of the previous and next step accepted', async () => {
    const u = await newUser('member');
    const { secret } = await enable(u.token);
    const missing = await signIn(u);
    expect(missing.status).toBe(401);
    expect(missing.body).toMatchObject({ detail: 'A one-time code is required', code: 'mfa_required' });
    const wrong = await signIn(u, codeAt(secret, shift(-300_000)));
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('mfa_invalid');
    // A wrong password with a right code says only that the credentials are wrong.
    expect((await signIn({ ...u, password: 'nope-nope-nope' }, codeAt(secret, now()))).body).toMatchObject({ detail: 'Incorrect username or password' });

    const code = codeAt(secret, now());
    const ok = await signIn(u, code);
    expect(ok.status).toBe(200);
    expect((await stack.api('GET', '/v1/me', { token: ok.body.access_token })).status).toBe(200);
    expect((await signIn(u, code)).status).toBe(401);
    // Two steps on, the current code signs in; then the previous step's, never used, still does (once).
    nextStep();
    nextStep();
    expect((await signIn(u, codeAt(secret, now()))).status).toBe(200);
    const previous = codeAt(secret, shift(-30_000));
    expect((await signIn(u, previous)).status).toBe(200);
    expect((await signIn(u, previous)).status).toBe(401);

    nextStep();
    expect((await signIn(u, codeAt(secret, shift(30_000)))).status).toBe(200);
    nextStep();
    nextStep();
    nextStep();
    expect((await signIn(u, codeAt(secret, shift(-30_000)))).status).toBe(200);
    nextStep();
    nextStep();
    nextStep();
    expect((await signIn(u, codeAt(secret, shift(-60_000)))).status).toBe(401);
  });

  it('When two sign-ins race with the same code, then exactly one gets a token', async () => {
    const u = await newUser('member');
    const { secret } = await enable(u.token);
    const code = codeAt(secret, now());
    // Four: LOGIN_MAX_FAILURES, so the sign-in guard lets every one of them through to the code check.
    const results = await Promise.all(Array.from({ length: 4 }, () => signIn(u, code)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 401, 401, 401]);
  });

  it('When a recovery code signs in, then it works once; a right password with a missing or wrong code keeps its failure count', async () => {
    const u = await newUser('member');
    const { secret, recovery } = await enable(u.token);
    expect((await signIn(u, recovery[0]!.toUpperCase())).status).toBe(200);
    const again = await signIn(u, recovery[0]!);
    expect(again.status).toBe(401);
    expect(again.body.code).toBe('mfa_invalid');
    expect((await signIn(u, recovery[1]!)).status).toBe(200);

    // LOGIN_MAX_FAILURES=4 (the success above cleared the count): four right passwords without a good code lock the username.
    expect((await signIn(u)).status).toBe(401);
    expect((await signIn(u, '000000')).status).toBe(401);
    expect((await signIn(u, recovery[0]!)).status).toBe(401);
    expect((await signIn(u)).status).toBe(401);
    const locked = await signIn(u, codeAt(secret, now()));
    expect(locked.status).toBe(429);
  });

  it('When a user turns MFA off, then a wrong code is 400, the right one (with the current password) 204, and sign-in needs no code again', async () => {
    const u = await newUser('member');
    const { secret, token } = await enable(u.token, u);
    const off = (code: string, t = token!) => stack.api('DELETE', '/v1/me/mfa/totp', { token: t, json: { code, current_password: u.password } });
    expect((await off('123456')).status).toBe(400);
    expect((await off(codeAt(secret, now()))).status).toBe(204);
    const again = await signIn(u);
    expect(again.status).toBe(200);
    expect((await off(codeAt(secret, now()), again.body.access_token)).status).toBe(409);
  });

  it('When a user has lost the authenticator and the recovery codes, then the operator\'s user:mfa-reset turns it off', async () => {
    const u = await newUser('member');
    await enable(u.token);
    expect((await signIn(u)).status).toBe(401);
    const id = await stack.db.oneFirst(sql.type(z.object({ id: z.coerce.number() }))`SELECT id FROM users WHERE username = ${u.username}`);
    const { stdout } = await promisify(execFile)(process.execPath, ['src/cli/admin.ts', 'user:mfa-reset', '--user', String(id)], {
      env: { ...process.env, NODE_ENV: 'test', DATABASE_URL: stack.config.DATABASE_URL, LOG_LEVEL: 'silent', SANDBOX_SEED: 'false' },
    });
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({ user: id, mfa: false });
    expect((await signIn(u)).status).toBe(200);
  });

  it('When an organisation requires MFA, then its administrators can only enrol until they have, members are unaffected, and an enrolled administrator cannot turn it off', async () => {
    const own = await stack.createOrg();
    const second = await newUser('org_admin', own.orgId);
    expect((await stack.api('PATCH', '/v1/me/organisation', { token: own.member.token, json: { require_mfa: true } })).status).toBe(403);
    expect((await stack.api('PATCH', '/v1/me/organisation', { token: own.admin.token, json: { require_mfa: 'yes' } })).status).toBe(422);
    expect((await stack.api('PATCH', '/v1/me/organisation', { token: own.admin.token, json: { require_mf: true } })).status).toBe(400);
    const set = await stack.api('PATCH', '/v1/me/organisation', { token: own.admin.token, json: { require_mfa: true } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ require_mfa: true });

    for (const [method, path] of [['GET', '/v1/verifications'], ['GET', '/v1/team'], ['PATCH', '/v1/me/organisation'], ['POST', '/v1/verify-nin/requery']] as const) {
      const json = method === 'PATCH' ? {} : method === 'POST' ? { reference_id: 'REF-AAAAAAAAAAAA' } : undefined;
      const r = await stack.api(method, path, { token: second.token, json });
      expect(r.status, path).toBe(403);
      expect(r.body).toEqual({ detail: 'Your organisation requires two-factor sign-in: enrol with POST /me/mfa/totp first', code: 'mfa_enrolment_required' });
    }
    expect((await stack.api('GET', '/v1/me', { token: second.token })).status).toBe(200);
    expect((await stack.api('GET', '/v1/verifications', { token: own.member.token })).status).toBe(200);

    const { secret, token } = await enable(second.token, second);
    expect((await stack.api('GET', '/v1/verifications', { token: token! })).status).toBe(200);
    const off = await stack.api('DELETE', '/v1/me/mfa/totp', { token: token!, json: { code: codeAt(secret, now()), current_password: second.password } });
    expect(off.status).toBe(403);
    expect(off.body.code).toBe('mfa_required_by_organisation');
  });

  it('When an operator with two-factor sign-in on uses HTTP Basic on the queue board, then 401 mfa_required; a bearer token from a full sign-in works', async () => {
    const op = { username: `op-${Math.random().toString(36).slice(2, 10)}`, password: 'an-operator-password' };
    await createUser(stack.db, { orgId: null, ...op, role: 'platform_admin' });
    const token = await stack.login(op.username, op.password);
    const basic = { authorization: `Basic ${Buffer.from(`${op.username}:${op.password}`).toString('base64')}` };
    expect((await stack.api('GET', '/admin/queues', { headers: basic })).status).toBe(200);
    const { secret } = await enable(token);
    // Within the minute the board remembers a Basic sign-in, too.
    const refused = await stack.api('GET', '/admin/queues', { headers: basic });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ detail: 'Two-factor sign-in is on: use a bearer token from POST /login', code: 'mfa_required' });
    const full = await signIn(op, codeAt(secret, now()));
    expect(full.status).toBe(200);
    expect((await stack.api('GET', '/admin/queues', { token: full.body.access_token })).status).toBe(200);
  });
});
