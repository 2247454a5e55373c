import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

const q = sql.type(z.record(z.string(), z.any()));

let stack: Stack;
let org: OrgFixture;

beforeAll(async () => {
  stack = await startStack();
  org = await stack.createOrg();
});
afterAll(async () => stack?.close());

describe('PUT /settings/auto-topup with a wrong password', () => {
  it('When the password re-entered is wrong, then 403 and one auth.login_failed event naming the caller and the operation, with nothing typed in it', async () => {
    const userId = await stack.db.oneFirst(sql.type(z.object({ id: z.coerce.number() }))`SELECT id FROM users WHERE username = ${org.admin.username}`);
    const body = { enabled: false, below_units: 50, units: 1000, max_per_day: 2, password: 'not-my-password-7731' };
    const wrong = await stack.api('PUT', '/v1/settings/auto-topup', { token: org.admin.token, json: body });
    expect(wrong.status).toBe(403);

    const events = await stack.db.any(q`SELECT actor, target, details FROM audit_events WHERE org_id = ${org.orgId} AND action = 'auth.login_failed' ORDER BY id`);
    expect(events).toEqual([{ actor: `user:${userId}`, target: `user:${userId}`, details: { method: 'password', known_account: true, confirming: 'auto_topup.settings' } }]);
    expect(JSON.stringify(events)).not.toContain('not-my-password-7731');
    expect(JSON.stringify(events)).not.toContain(org.admin.username);

    // The right password leaves no failure behind.
    expect((await stack.api('PUT', '/v1/settings/auto-topup', { token: org.admin.token, json: { ...body, password: org.admin.password } })).status).toBe(200);
    expect(await stack.db.oneFirst(q`SELECT count(*)::int AS n FROM audit_events WHERE org_id = ${org.orgId} AND action = 'auth.login_failed'`)).toBe(1);
  });
});
