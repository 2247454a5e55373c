import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

const run = promisify(execFile);
const RULES = {
  control: 'must not contain line breaks or other control characters',
  bidi: 'must not contain bidirectional control characters',
  invisible: 'must not contain zero-width or other invisible formatting characters',
  mixed: 'must not mix Latin letters with Cyrillic or Greek ones',
};

let stack: Stack;
let org: OrgFixture;

beforeAll(async () => {
  stack = await startStack({ workers: false, env: { RATE_LIMIT_PER_TOKEN: '10000', RATE_LIMIT_PER_ORG: '10000' } });
  org = await stack.createOrg();
});
afterAll(async () => stack?.close());

const tag = () => randomBytes(3).toString('hex');
const invite = (username: string, o: OrgFixture = org) => stack.api('POST', '/v1/team/invitations', { token: o.admin.token, json: { username, email: `${tag()}@example.com`, role: 'member' } });

async function operator(...args: string[]): Promise<{ code: number; out: any }> {
  const env = { ...process.env, DATABASE_URL: stack.config.DATABASE_URL, LOG_LEVEL: 'silent' };
  try {
    const r = await run(process.execPath, ['src/cli/admin.ts', ...args], { env });
    return { code: 0, out: JSON.parse(r.stdout.trim()) };
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, out: JSON.parse(e.stderr.trim().split('\n')[0]!) };
  }
}

describe('username rules', () => {
  it('When POST /team/invitations gets a look-alike, a bidirectional override, a zero-width or a control character, then 400 naming the rule and nobody is created', async () => {
    const cases: [string, RegExp][] = [
      [`\u0430dmin-${tag()}`, new RegExp(`^username: ${RULES.mixed}$`)],
      [`paypal-\u03bf-${tag()}`, new RegExp(`^username: ${RULES.mixed}$`)],
      [`admin-${tag()}\u202egnp.exe`, new RegExp(`^username: ${RULES.bidi}$`)],
      [`ad\u200bmin-${tag()}`, new RegExp(`^username: ${RULES.invisible}$`)],
      [`admin-${tag()}\nDear user, your account is locked`, /^username: must not contain (line breaks or other )?control characters$/],
    ];
    const own = await stack.createOrg();
    for (const [username, detail] of cases) {
      const r = await invite(username, own);
      expect(r.status, JSON.stringify(username)).toBe(400);
      expect(r.body.detail).toMatch(detail);
    }
    const invited = await stack.api('GET', '/v1/team/invitations', { token: own.admin.token });
    expect(invited.body.data).toHaveLength(0);
  });

  it('When the username is in full-width letters, then it is stored NFKC-normalised and signs in either way; a name in one non-Latin script is fine', async () => {
    const plain = `clerk-${tag()}`;
    const wide = plain.toUpperCase().replace(/[!-~]/g, (c) => String.fromCodePoint(c.codePointAt(0)! + 0xfee0));
    const r = await invite(wide);
    expect(r.status).toBe(201);
    expect(r.body.username).toBe(plain);
    const otherPlain = `clerk-${tag()}`;
    const otherWide = otherPlain.toUpperCase().replace(/[!-~]/g, (c) => String.fromCodePoint(c.codePointAt(0)! + 0xfee0));
    const made = await operator('user:create', '--org', String(org.orgId), '--username', otherWide, '--password', 'long-password', '--role', 'member');
    expect(made.code).toBe(0);
    expect(made.out.username).toBe(otherPlain);
    expect((await stack.api('POST', '/v1/login', { form: { username: otherWide, password: 'long-password' } })).status).toBe(200);
    const digits = String(randomBytes(4).readUInt32BE(0));
    const cyrillic = await invite(`\u0430\u0434\u043c\u0438\u043d-${digits}`);
    expect(cyrillic.status).toBe(201);
  });

  it('When the operator creates a user (user:create, platform administrators too) with such a name, then exit 1 naming the rule', async () => {
    const member = await operator('user:create', '--org', String(org.orgId), '--username', `\u0430dmin-${tag()}`, '--password', 'long-password', '--role', 'member');
    expect(member).toEqual({ code: 1, out: { detail: `username: ${RULES.mixed}` } });
    const platform = await operator('user:create', '--username', `ops-${tag()}\nroot`, '--password', 'long-password', '--role', 'platform_admin');
    expect(platform).toEqual({ code: 1, out: { detail: `username: ${RULES.control}` } });
    const tab = await operator('user:create', '--username', `ops-${tag()}`, '--password', 'long\tpassword', '--role', 'platform_admin');
    expect(tab).toEqual({ code: 1, out: { detail: 'password: must not contain control characters' } });
  });

  it('When rows made before the rules break them, then user:check-names reports them with their rules and changes nothing', async () => {
    const id = await stack.db.oneFirst(sql.unsafe`
      INSERT INTO users (org_id, username, password_hash, role) VALUES (${org.orgId}, ${`\u0430dmin\u200b-${tag()}`}, 'x', 'member') RETURNING id`);
    const r = await operator('user:check-names');
    expect(r.code).toBe(0);
    expect(r.out.ok).toBe(false);
    expect(r.out.users).toContainEqual({ id: Number(id), org_id: org.orgId, problems: [RULES.invisible, RULES.mixed] });
    expect(r.out.users.some((u: { id: number }) => u.id !== Number(id))).toBe(false);
  });
});
