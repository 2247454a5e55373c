import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../setup/harness.ts';

// The organisation's support contact (PATCH /me/organisation `support_contact`): a sentence naming an
// e-mail address, a phone number or a web address, shown on the link pages that cannot go on.

const RULE =
  'support_contact: support_contact must be one sentence of at most 200 characters naming an e-mail address, a phone number or a web address (e.g. "Call 0803 123 4567 or write to help@example.com")';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ workers: false });
});
afterAll(async () => {
  await stack?.close();
});

describe('support_contact', () => {
  it('When an administrator sets a sentence with an e-mail, a phone or a web address, then it is saved (spaces folded), returned with the settings, and left out of the audit trail', async () => {
    const org = await stack.createOrg();
    for (const [sent, kept] of [
      ['Write to help@bank.example', 'Write to help@bank.example'],
      ['Call  0803 123 4567\t(9am to 5pm)', 'Call 0803 123 4567 (9am to 5pm)'],
      ['Call +234 803 123 4567', 'Call +234 803 123 4567'],
      ['See https://bank.example/help', 'See https://bank.example/help'],
      ['Visit www.bank.example', 'Visit www.bank.example'],
    ] as const) {
      const r = await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: { support_contact: sent } });
      expect(r.status, r.text).toBe(200);
      expect(r.body.support_contact).toBe(kept);
      expect((await stack.api('GET', '/v1/me/organisation', { token: org.member.token })).body.support_contact).toBe(kept);
    }
    const details = await stack.db.anyFirst(sql.type(z.object({ details: z.any() }))`
      SELECT details FROM audit_events WHERE org_id = ${org.orgId} AND action = 'organisation.settings_changed' ORDER BY id`);
    expect(details.length).toBe(5);
    for (const d of details) expect(d).toEqual({ changed: ['support_contact'] });

    const removed = await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: { support_contact: null } });
    expect(removed.status).toBe(200);
    expect(removed.body.support_contact).toBeNull();
  });

  it('When the sentence names no way to reach anyone, is empty or too long, then 400 with the rule; a wrong type is 422; nothing is saved', async () => {
    const org = await stack.createOrg();
    expect((await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: { support_contact: 'Write to help@bank.example' } })).status).toBe(200);
    for (const [sent, status, detail] of [
      ['Ask at the branch', 400, RULE],
      ['Call 12345', 400, RULE],
      ['help at bank dot example', 400, RULE],
      ['   ', 400, `${RULE}; null removes it`],
      [`Write to help@bank.example ${'x'.repeat(200)}`, 400, RULE],
      [42, 422, 'Invalid type for support_contact: Invalid input: expected string, received number'],
    ] as const) {
      const r = await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: { support_contact: sent } });
      expect([r.status, r.body.detail], String(sent)).toEqual([status, detail]);
    }
    expect((await stack.api('GET', '/v1/me/organisation', { token: org.admin.token })).body.support_contact).toBe('Write to help@bank.example');
  });

  it('When a team member tries to set it, then 403', async () => {
    const org = await stack.createOrg();
    const r = await stack.api('PATCH', '/v1/me/organisation', { token: org.member.token, json: { support_contact: 'Write to help@bank.example' } });
    expect(r.status).toBe(403);
    expect(r.body.detail).toEqual(expect.any(String));
  });
});
