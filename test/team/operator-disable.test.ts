import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

const run = promisify(execFile);
const DISABLED_BY_OPERATOR = 'This user was disabled by an operator: only an operator can enable them again (user:enable)';

let stack: Stack;
let org: OrgFixture;

beforeAll(async () => {
  stack = await startStack({ workers: false });
  org = await stack.createOrg();
});
afterAll(async () => stack?.close());

/** The operator's CLI against this stack's database. */
async function operator(...args: string[]) {
  const r = await run(process.execPath, ['src/cli/admin.ts', ...args], { env: { ...process.env, DATABASE_URL: stack.config.DATABASE_URL, LOG_LEVEL: 'silent' } });
  return JSON.parse(r.stdout.trim());
}

async function addMember() {
  const username = `clerk-${randomBytes(4).toString('hex')}`;
  const password = `pw-${randomBytes(6).toString('hex')}`;
  const made = await operator('user:create', '--org', String(org.orgId), '--username', username, '--password', password, '--role', 'member', '--email', `${username}@example.com`);
  return { id: Number(made.id), username, password };
}

const patch = (id: number, json: unknown) => stack.api('PATCH', `/v1/team/${id}`, { token: org.admin.token, json });

describe('PATCH /team/{id} and the operator', () => {
  it('When an operator disabled a user (user:disable), then the organisation administrator cannot enable them (403 naming the operator), only user:enable can', async () => {
    const u = await addMember();
    expect((await operator('user:disable', '--username', u.username)).disabled).toBe(true);

    const refused = await patch(u.id, { disabled: false });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ detail: DISABLED_BY_OPERATOR });
    // Changing the role or disabling again is still the administrator's to do; the user stays disabled.
    expect((await patch(u.id, { role: 'org_admin', disabled: true })).body).toMatchObject({ role: 'org_admin', disabled: true });
    expect((await patch(u.id, { disabled: false })).status).toBe(403);
    expect((await stack.api('POST', '/v1/login', { form: { username: u.username, password: u.password } })).status).toBe(401);

    expect((await operator('user:enable', '--user', String(u.id))).disabled).toBe(false);
    expect((await stack.api('POST', '/v1/login', { form: { username: u.username, password: u.password } })).status).toBe(200);
  });

  it('When the organisation administrator disabled a user, then they can enable them again', async () => {
    const u = await addMember();
    expect((await patch(u.id, { disabled: true })).body.disabled).toBe(true);
    const on = await patch(u.id, { disabled: false });
    expect(on.status).toBe(200);
    expect(on.body.disabled).toBe(false);
  });
});
