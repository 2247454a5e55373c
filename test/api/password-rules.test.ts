import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/modules/organisations/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// The rules on a new password compare NFKC-normalised, case-folded text, and refuse control characters.

let stack: Stack;
let org: OrgFixture;

beforeAll(async () => {
  stack = await startStack({ workers: false, env: { RATE_LIMIT_PER_TOKEN: '10000' } });
  org = await stack.createOrg();
});
afterAll(async () => stack?.close());

/** Full-width forms of ASCII letters and digits: NFKC turns them back into the plain ones. */
const fullWidth = (s: string) => s.replace(/[!-~]/g, (c) => String.fromCodePoint(c.codePointAt(0)! + 0xfee0));

async function signedIn() {
  const u = { username: `bert${randomBytes(3).toString('hex')}`, password: `initial-${randomBytes(4).toString('hex')}` };
  await createUser(stack.db, { orgId: org.orgId, ...u, role: 'member', requirePasswordChange: false });
  return { ...u, token: await stack.login(u.username, u.password) };
}

describe('new password rules', () => {
  it('When the new password is the username padded with NUL characters, or holds a tab or escape, then 400 naming control characters', async () => {
    const u = await signedIn();
    const change = (new_password: string) => stack.api('POST', '/v1/change-password', { token: u.token, json: { current_password: u.password, new_password } });
    const padded = await change(`${u.username}\u0000\u0000\u0000\u0000`);
    expect(padded.status).toBe(400);
    expect(padded.body.detail).toMatch(/must not contain control characters$/);
    for (const pw of ['a-long\tpassphrase', 'a-long-passphrase\u007f']) {
      const r = await change(pw);
      expect(r.status, JSON.stringify(pw)).toBe(400);
      expect(r.body).toEqual({ detail: 'New password must not contain control characters' });
    }
    // None of it was taken: the old password still signs in.
    await stack.login(u.username, u.password);
  });

  it('When the new password holds the username in another case or in full-width letters, then 400; the same without the username is accepted', async () => {
    const u = await signedIn();
    const change = (new_password: string) => stack.api('POST', '/v1/change-password', { token: u.token, json: { current_password: u.password, new_password } });
    expect((await change(fullWidth(u.username.toUpperCase()))).body).toEqual({ detail: 'New password must not be the username' });
    for (const pw of [`${fullWidth(u.username.toUpperCase())}-2024!`, `My-${u.username.toUpperCase()}-secret`]) {
      const r = await change(pw);
      expect(r.status, pw).toBe(400);
      expect(r.body).toEqual({ detail: 'New password must not contain the username' });
    }
    expect((await change('correct-horse-battery')).status).toBe(200);
  });
});
