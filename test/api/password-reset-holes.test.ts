import { randomBytes } from 'node:crypto';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createUser, deleteOrganisation, setUserDisabled } from '../../src/modules/organisations/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { decodeQuotedPrintable, startSmtpSink, type SmtpSink } from '../setup/smtp.ts';
import { waitFor } from '../setup/wait.ts';

const BAD_TOKEN = { detail: 'Invalid or expired reset token' };
const NOT_SENT = 'password reset not sent: too many recent requests';

let smtp: SmtpSink;
let stack: Stack;
let org: OrgFixture;

beforeAll(async () => {
  smtp = await startSmtpSink();
  stack = await startStack({ captureLogs: true, env: { SMTP_URL: smtp.url } });
  org = await stack.createOrg();
});
afterAll(async () => {
  await stack?.close();
  await smtp?.close();
});

const forgot = (username: string) => stack.api('POST', '/v1/forgot-password', { json: { username } });
const reset = (token: string, newPassword: string) => stack.api('POST', '/v1/reset-password', { json: { token, new_password: newPassword } });

async function newUser(orgId = org.orgId) {
  const username = `person-${randomBytes(4).toString('hex')}`;
  const email = `${username}@example.test`;
  const row = await createUser(stack.db, { orgId, username, password: `initial-${randomBytes(4).toString('hex')}`, role: 'member', email, requirePasswordChange: false });
  return { id: row.id, username, email };
}

/** Asks for a reset and reads the token from the e-mail the SMTP server received. */
async function resetToken(u: { username: string; email: string }): Promise<string> {
  expect((await forgot(u.username)).status).toBe(202);
  const mail = await waitFor(() => smtp.messages.find((m) => m.to.includes(u.email)), { what: `reset e-mail to ${u.email}` });
  return /Reset token \(valid 30 minutes, usable once\): ([A-Za-z0-9_-]{43})/.exec(decodeQuotedPrintable(mail.raw))![1]!;
}

describe('reset tokens of users who may not sign in', () => {
  it('When the user is disabled by an operator after the e-mail, then the token is refused like an unknown one, and stays void after user:enable', async () => {
    const u = await newUser();
    const token = await resetToken(u);
    await setUserDisabled(stack.db, { id: u.id }, true);
    expect(await reset(token, 'a-brand-new-password')).toMatchObject({ status: 400, body: BAD_TOKEN });
    await setUserDisabled(stack.db, { id: u.id }, false);
    expect(await reset(token, 'a-brand-new-password')).toMatchObject({ status: 400, body: BAD_TOKEN });
  });

  it('When an organisation administrator disables the user and enables them again, then the earlier token is void', async () => {
    const u = await newUser();
    const token = await resetToken(u);
    expect((await stack.api('PATCH', `/v1/team/${u.id}`, { token: org.admin.token, json: { disabled: true } })).status).toBe(200);
    expect((await stack.api('PATCH', `/v1/team/${u.id}`, { token: org.admin.token, json: { disabled: false } })).status).toBe(200);
    expect(await reset(token, 'a-brand-new-password')).toMatchObject({ status: 400, body: BAD_TOKEN });
  });

  it("When the user's organisation is retired, then the token is refused like an unknown one", async () => {
    const retiring = await stack.createOrg();
    const u = await newUser(retiring.orgId);
    const token = await resetToken(u);
    await deleteOrganisation(stack.db, retiring.orgId);
    expect(await reset(token, 'a-brand-new-password')).toMatchObject({ status: 400, body: BAD_TOKEN });
  });
});

describe('the reset e-mail cap under concurrency', () => {
  it('When 20 forgot-password requests for one user arrive at once, then exactly 3 e-mails are sent and 17 are refused', async () => {
    const u = await newUser();
    const answers = await Promise.all(Array.from({ length: 20 }, () => forgot(u.username)));
    expect(answers.every((a) => a.status === 202)).toBe(true);

    // Every request has finished its work once each one either stored a reset or logged its refusal.
    const refusals = () => stack.logs.map((l) => JSON.parse(l) as { msg?: string; userId?: number }).filter((l) => l.msg === NOT_SENT && l.userId === u.id).length;
    const stored = () => stack.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM password_resets WHERE user_id = ${u.id}`);
    await waitFor(async () => (await stored()) + refusals() === 20, { what: 'all 20 requests decided' });
    expect(await stored()).toBe(3);
    expect(refusals()).toBe(17);

    // And the e-mails themselves, once the outbox has sent every row it holds.
    await waitFor(
      () => stack.db.oneFirst(sql.type(z.object({ pending: z.boolean() }))`SELECT NOT EXISTS (SELECT 1 FROM outbox WHERE kind = 'password_reset_email' AND status <> 'sent') AS pending`),
      { what: 'the outbox drained' },
    );
    expect(smtp.messages.filter((m) => m.to.includes(u.email))).toHaveLength(3);
  });
});
