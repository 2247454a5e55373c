import { Secret, TOTP } from 'otpauth';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createUser } from '../../src/modules/organisations/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// Wrong one-time (or recovery) codes are counted per user on every endpoint that takes one: past 10
// in 15 minutes, 429 with Retry-After and one mfa.codes_locked event. The per-token request limit and
// the sign-in guard are set out of the way, so the counts seen are the code count's.
let stack: Stack;
let org: OrgFixture;

beforeAll(async () => {
  stack = await startStack({
    workers: false,
    manualClock: new Date(),
    env: { LOGIN_MAX_FAILURES: '1000', LOGIN_MAX_FAILURES_PER_ADDRESS: '100000', RATE_LIMIT_PER_TOKEN: '100000' },
  });
  org = await stack.createOrg();
});
afterAll(async () => stack?.close());

const codeAt = (secret: string, at: Date) => new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at.getTime() });
const now = () => stack.clock.now();
const nextStep = () => stack.clock.advance!(30_000);
const signIn = (u: { username: string; password: string }, otp?: string) =>
  stack.api('POST', '/v1/login', { form: { username: u.username, password: u.password, ...(otp === undefined ? {} : { otp }) } });

async function newUser() {
  const u = { username: `c-${Math.random().toString(36).slice(2, 10)}`, password: 'a-long-password-1' };
  const id = (await createUser(stack.db, { orgId: org.orgId, ...u, role: 'member', requirePasswordChange: false })).id as number;
  return { ...u, id, token: await stack.login(u.username, u.password) };
}

/** Two-factor sign-in on; answers the secret and a token of a sign-in with a code (turning it on ended the earlier ones). */
async function enabled(u: { username: string; password: string; token: string }) {
  const enrol = await stack.api('POST', '/v1/me/mfa/totp', { token: u.token });
  const secret = enrol.body.secret as string;
  expect((await stack.api('POST', '/v1/me/mfa/totp/confirm', { token: u.token, json: { code: codeAt(secret, now()) } })).status).toBe(200);
  nextStep();
  const signedIn = await signIn(u, codeAt(secret, now()));
  expect(signedIn.status).toBe(200);
  nextStep();
  return { secret, token: signedIn.body.access_token as string };
}

async function lockEvents(userId: number): Promise<number> {
  return stack.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`
    SELECT count(*) AS n FROM audit_events WHERE action = 'mfa.codes_locked' AND target = ${`user:${userId}`}`);
}

/** Codes no authenticator shows now: six digits, and recovery-code-shaped ones (they count too). */
const wrongCode = (i: number) => (i % 2 === 0 ? String(100000 + i) : `zzzz-zzzz-${String(i).padStart(4, '0')}`);

/**
 * At most MAX answers judged a code (400); the rest 429. A 503 judged nothing (a database connection
 * not had in time on a loaded machine, before or while the code was checked, its point given back)
 * and is allowed beside them, never counted as an answer about the code.
 */
function expectAtMostTenJudged(answers: { status: number }[]) {
  expect(answers.filter((r) => r.status !== 429 && r.status !== 503).length).toBeLessThanOrEqual(10);
  expect(answers.filter((r) => ![400, 429, 503].includes(r.status))).toEqual([]);
}

function expectLocked(r: { status: number; headers: Headers }) {
  expect(r.status).toBe(429);
  expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
}

describe('failed one-time codes are counted per user', () => {
  it('when 300 wrong codes race to POST /me/mfa/totp/confirm, then at most 10 are judged (400) and the rest 429 with Retry-After (a 503 of an overloaded machine judges nothing), one mfa.codes_locked event is recorded, and even the right code is then refused', async () => {
    const u = await newUser();
    const enrol = await stack.api('POST', '/v1/me/mfa/totp', { token: u.token });
    expect(enrol.status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => stack.api('POST', '/v1/me/mfa/totp/confirm', { token: u.token, json: { code: wrongCode(i) } })));
    expectAtMostTenJudged(answers);
    for (const r of answers.filter((a) => a.status === 429)) expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await lockEvents(u.id)).toBe(1);
    expectLocked(await stack.api('POST', '/v1/me/mfa/totp/confirm', { token: u.token, json: { code: codeAt(enrol.body.secret, now()) } }));
  });

  // Forty, not 300: each one also proves the password (an argon2 hash), which is what takes the time.
  it('when 40 wrong codes race to DELETE /me/mfa/totp (with the right password), then at most 10 are judged (400) and the rest 429, and two-factor sign-in stays on', { timeout: 120_000 }, async () => {
    const u = await newUser();
    const { secret, token } = await enabled(u);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => stack.api('DELETE', '/v1/me/mfa/totp', { token, json: { code: wrongCode(i), current_password: u.password } })),
    );
    expectAtMostTenJudged(answers);
    expectLocked(await stack.api('DELETE', '/v1/me/mfa/totp', { token, json: { code: codeAt(secret, now()), current_password: u.password } }));
    expect((await signIn(u)).body.code).toBe('mfa_required');
  });

  it('when a user sends 10 wrong codes at sign-in, then the 11th attempt, even with the right code, is 429 with Retry-After on sign-in and on DELETE /me/mfa/totp alike', async () => {
    const u = await newUser();
    const { secret, token } = await enabled(u);
    for (let i = 0; i < 10; i++) {
      const r = await signIn(u, wrongCode(i));
      expect(r.status).toBe(401);
      expect(r.body.code).toBe('mfa_invalid');
    }
    expect(await lockEvents(u.id)).toBe(0);
    expectLocked(await signIn(u, codeAt(secret, now())));
    expect(await lockEvents(u.id)).toBe(1);
    expectLocked(await stack.api('DELETE', '/v1/me/mfa/totp', { token, json: { code: codeAt(secret, now()), current_password: u.password } }));
    // Only a proven password reaches the code: a wrong one still says only that the credentials are wrong.
    expect((await signIn({ ...u, password: 'not-the-password' }, codeAt(secret, now()))).status).toBe(401);
    expect(await lockEvents(u.id)).toBe(1);
  });

  it('when a user turns two-factor sign-in off, then the current password is needed too: missing 422, wrong 400 (and it stays on), right with a right code 204', async () => {
    const u = await newUser();
    const { secret, token } = await enabled(u);
    const missing = await stack.api('DELETE', '/v1/me/mfa/totp', { token, json: { code: codeAt(secret, now()) } });
    expect(missing.status).toBe(422);
    const wrong = await stack.api('DELETE', '/v1/me/mfa/totp', { token, json: { code: codeAt(secret, now()), current_password: 'not-the-password' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({ detail: 'Current password is incorrect' });
    expect((await signIn(u)).body.code).toBe('mfa_required');
    expect((await stack.api('DELETE', '/v1/me/mfa/totp', { token, json: { code: codeAt(secret, now()), current_password: u.password } })).status).toBe(204);
    expect((await signIn(u)).status).toBe(200);
  });
});
