import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envFromConfig } from '../chaos/chaos-stack.ts';
import { repoPath, spawnNode, type NodeChild } from '../../bench/lib/proc.ts';
import { createUser } from '../../src/modules/organisations/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

// Turning two-factor sign-in on or off, and signing in with a recovery code, end the user's other
// tokens as a password change does (the caller's too, for on and off), in every API process at once:
// API A is this process's app, API B `node src/server.ts` with its own token memo and pools.
let stack: Stack;
let org: OrgFixture;
let b: NodeChild;
let bUrl: string;

beforeAll(async () => {
  stack = await startStack({ workers: false, env: { LOGIN_MAX_FAILURES: '1000', RATE_LIMIT_PER_TOKEN: '100000' } });
  org = await stack.createOrg();
  b = spawnNode('api-b', repoPath('src/server.ts'), { ...envFromConfig(stack.config), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', METRICS_TOKEN: '' });
  const line = await waitFor(() => b.logs.find((l) => l.includes('api listening')), { what: 'API B listening', timeoutMs: 60_000 });
  bUrl = `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
}, 90_000);

afterAll(async () => {
  await b?.stop(10_000);
  await stack?.close();
});

/** GET /v1/me on A and on B: the status each answers. */
async function meOnBoth(token: string): Promise<[number, number]> {
  const onB = await fetch(`${bUrl}/v1/me`, { headers: { authorization: `Bearer ${token}` } });
  return [(await stack.api('GET', '/v1/me', { token })).status, onB.status];
}

// The system clock: a code of the next step is accepted (one step ahead), so each use takes its own step.
const codeIn = (secret: string, steps: number) => new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: Date.now() + steps * 30_000 });
const signIn = (u: { username: string; password: string }, otp?: string) =>
  stack.api('POST', '/v1/login', { form: { username: u.username, password: u.password, ...(otp === undefined ? {} : { otp }) } });

async function newUser() {
  const u = { username: `s-${Math.random().toString(36).slice(2, 10)}`, password: 'a-long-password-1' };
  await createUser(stack.db, { orgId: org.orgId, ...u, role: 'member', requirePasswordChange: false });
  return u;
}

describe('two-factor changes end the user\'s other sessions', () => {
  it('when a user turns two-factor sign-in on, then every earlier token (the caller\'s included) is refused by both API processes, and a sign-in with a code works', async () => {
    const u = await newUser();
    const other = await stack.login(u.username, u.password);
    const caller = await stack.login(u.username, u.password);
    // Both processes have seen (and remembered) the other session's token.
    expect(await meOnBoth(other)).toEqual([200, 200]);
    const enrol = await stack.api('POST', '/v1/me/mfa/totp', { token: caller });
    const confirm = await stack.api('POST', '/v1/me/mfa/totp/confirm', { token: caller, json: { code: codeIn(enrol.body.secret, 0) } });
    expect(confirm.status).toBe(200);
    expect(await meOnBoth(other)).toEqual([401, 401]);
    expect(await meOnBoth(caller)).toEqual([401, 401]);
    const fresh = await signIn(u, codeIn(enrol.body.secret, 1));
    expect(fresh.status).toBe(200);
    expect(await meOnBoth(fresh.body.access_token)).toEqual([200, 200]);
  });

  it('when a user signs in with a recovery code, then the new token works and every earlier one is refused; when they turn two-factor sign-in off, then every token is refused', async () => {
    const u = await newUser();
    const first = await stack.login(u.username, u.password);
    const enrol = await stack.api('POST', '/v1/me/mfa/totp', { token: first });
    const confirm = await stack.api('POST', '/v1/me/mfa/totp/confirm', { token: first, json: { code: codeIn(enrol.body.secret, 0) } });
    expect(confirm.status).toBe(200);
    const withCode = await signIn(u, codeIn(enrol.body.secret, 1));
    expect(withCode.status).toBe(200);
    const earlier = withCode.body.access_token as string;
    expect(await meOnBoth(earlier)).toEqual([200, 200]);

    const recovered = await signIn(u, confirm.body.recovery_codes[0]);
    expect(recovered.status).toBe(200);
    const current = recovered.body.access_token as string;
    expect(await meOnBoth(earlier)).toEqual([401, 401]);
    expect(await meOnBoth(current)).toEqual([200, 200]);

    const another = await signIn(u, confirm.body.recovery_codes[1]);
    expect(another.status).toBe(200);
    const caller = another.body.access_token as string;
    expect(await meOnBoth(current)).toEqual([401, 401]);
    const off = await stack.api('DELETE', '/v1/me/mfa/totp', { token: caller, json: { code: confirm.body.recovery_codes[2], current_password: u.password } });
    expect(off.status).toBe(204);
    expect(await meOnBoth(caller)).toEqual([401, 401]);
    expect((await signIn(u)).status).toBe(200);
  });
});
