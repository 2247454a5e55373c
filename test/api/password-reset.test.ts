import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createUser, setUserDisabled } from '../../src/modules/organisations/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { decodeQuotedPrintable, startSmtpSink, type SmtpSink } from '../setup/smtp.ts';
import { waitFor } from '../setup/wait.ts';

const q = sql.type(z.record(z.string(), z.any()));
const RESET_URL = 'https://app.example.test/reset?token={token}';
const ACCEPTED = { detail: 'If the account exists, a reset link has been sent' };

let smtp: SmtpSink;
let stack: Stack;
let org: OrgFixture;

beforeAll(async () => {
  smtp = await startSmtpSink();
  stack = await startStack({ manualClock: new Date(), env: { SMTP_URL: smtp.url, PASSWORD_RESET_URL: RESET_URL } });
  org = await stack.createOrg();
});
afterAll(async () => {
  await stack?.close();
  await smtp?.close();
});

const suffix = () => randomBytes(4).toString('hex');
const forgot = (username: unknown) => stack.api('POST', '/v1/forgot-password', { json: { username } });
const reset = (token: string, newPassword: string) => stack.api('POST', '/v1/reset-password', { json: { token, new_password: newPassword } });

async function newUser(o: { requirePasswordChange?: boolean; email?: string | null } = {}) {
  const u = { username: `person-${suffix()}`, password: `initial-${suffix()}` };
  const email = o.email === null ? undefined : (o.email ?? `${u.username}@example.test`);
  await createUser(stack.db, { orgId: org.orgId, ...u, role: 'member', email, requirePasswordChange: o.requirePasswordChange ?? false });
  return { ...u, email };
}

/** The reset e-mail for this address, read from the SMTP server, and the token it carries. */
async function resetMail(email: string) {
  const mail = await waitFor(() => smtp.messages.find((m) => m.to.includes(email)), { what: `reset e-mail to ${email}` });
  const text = decodeQuotedPrintable(mail.raw);
  const token = /Reset token \(valid 30 minutes, usable once\): ([A-Za-z0-9_-]{43})/.exec(text)?.[1];
  expect(token, text).toBeDefined();
  return { text, token: token! };
}

describe('POST /forgot-password and POST /reset-password', () => {
  it('When a reset is asked, then the outbox row is sealed, and once sent its body is erased and the token is stored only as a digest', async () => {
    // A stack of its own whose workers start only once the sealed row has been looked at.
    const own = await startStack({ workers: false, manualClock: new Date(), env: { SMTP_URL: smtp.url, PASSWORD_RESET_URL: RESET_URL } });
    try {
      const ownOrg = await own.createOrg();
      const u = { username: `person-${suffix()}`, password: `initial-${suffix()}` };
      const email = `${u.username}@example.test`;
      await createUser(own.db, { orgId: ownOrg.orgId, ...u, role: 'member', email, requirePasswordChange: false });
      expect((await own.api('POST', '/v1/forgot-password', { json: { username: u.username } })).status).toBe(202);
      const row = await waitFor(() => own.db.maybeOne(q`SELECT * FROM outbox WHERE kind = 'password_reset_email'`), { what: 'the outbox row' });
      expect(row.status).toBe('pending');
      expect(row.payload).toEqual({});
      const sealed = Buffer.from(row.body_enc as Buffer);
      expect(sealed.includes(Buffer.from(email))).toBe(false);
      expect(sealed.includes(Buffer.from(u.username))).toBe(false);

      await own.startWorkers();
      const { token } = await resetMail(email);
      expect(sealed.includes(Buffer.from(token))).toBe(false);
      const sent = await waitFor(() => own.db.maybeOne(q`SELECT * FROM outbox WHERE id = ${row.id} AND status = 'sent'`), { what: 'the row marked sent' });
      expect(sent.body_enc).toBeNull();
      const stored = await own.db.any(q`SELECT * FROM password_resets`);
      expect(stored).toHaveLength(1);
      expect(Buffer.from(stored[0]!.token_hash as Buffer).equals(createHash('sha256').update(token).digest())).toBe(true);
      const cells = Object.values(stored[0]!).map((v) => (Buffer.isBuffer(v) ? v.toString('latin1') : String(v)));
      expect(cells.some((c) => c.includes(token))).toBe(false);
    } finally {
      await own.close();
    }
  });

  it('When a user with a first-login flag resets with the e-mailed token, then 200, earlier tokens get 401, the new password logs in unasked and the old one does not', async () => {
    const u = await newUser({ requirePasswordChange: true });
    const before = (await stack.api('POST', '/v1/login', { form: { username: u.username, password: u.password } })).body.access_token as string;
    const asked = await forgot(u.username.toUpperCase());
    expect(asked.status).toBe(202);
    expect(asked.body).toEqual(ACCEPTED);

    const { text, token } = await resetMail(u.email!);
    expect(text).toContain('Subject: Reset your password');
    expect(text).toContain(`https://app.example.test/reset?token=${token}`);

    const r = await reset(token, 'chosen-by-me-1');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ detail: 'Password changed' });
    const old = await stack.api('GET', '/v1/me', { token: before });
    expect(old.status).toBe(401);
    expect((await stack.api('POST', '/v1/login', { form: { username: u.username, password: u.password } })).status).toBe(401);
    const login = await stack.api('POST', '/v1/login', { form: { username: u.username, password: 'chosen-by-me-1' } });
    expect(login.status).toBe(200);
    expect(login.body).not.toHaveProperty('require_password_change');

    const again = await reset(token, 'chosen-by-me-2');
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ detail: 'Invalid or expired reset token' });
  });

  it('When the username is unknown, disabled or has no e-mail address, then the very same 202 and no e-mail, while a real one gets its e-mail', async () => {
    const disabled = await newUser();
    await setUserDisabled(stack.db, { username: disabled.username }, true);
    const noAddress = await newUser({ email: null });
    const real = await newUser();
    const answers = [await forgot(`nobody-${suffix()}`), await forgot(disabled.username), await forgot(noAddress.username), await forgot(real.username)];
    for (const a of answers) {
      expect(a.status).toBe(202);
      expect(a.body).toEqual(ACCEPTED);
    }
    await resetMail(real.email!);
    const users = await stack.db.anyFirst(sql.type(z.object({ username: z.string() }))`
      SELECT u.username FROM password_resets r JOIN users u ON u.id = r.user_id`);
    expect(users).toContain(real.username);
    expect(users).not.toContain(disabled.username);
    expect(users).not.toContain(noAddress.username);
    expect(smtp.messages.some((m) => m.to.includes(disabled.email!))).toBe(false);
  });

  it('When the new password breaks a rule, then 400 naming it and the token still works for a good one', async () => {
    const u = await newUser();
    await forgot(u.username);
    const { token } = await resetMail(u.email!);
    const short = await reset(token, 'short');
    expect(short.status).toBe(400);
    expect(short.body).toEqual({ detail: 'New password must be at least 8 characters' });
    const same = await reset(token, u.password);
    expect(same.body).toEqual({ detail: 'New password must not be the current password' });
    const name = await reset(token, u.username);
    expect(name.body).toEqual({ detail: 'New password must not be the username' });
    expect((await reset(token, 'finally-a-good-one')).status).toBe(200);
  });

  it('When the token is unknown or malformed, or a field is missing, then 400 / 422 / 415 as usual', async () => {
    const unknown = await reset(randomBytes(32).toString('base64url'), 'whatever-password');
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ detail: 'Invalid or expired reset token' });
    const missing = await stack.api('POST', '/v1/reset-password', { json: { token: 'abc' } });
    expect(missing.status).toBe(422);
    expect(missing.body.errors[0].loc).toEqual(['new_password']);
    const noUser = await stack.api('POST', '/v1/forgot-password', { json: {} });
    expect(noUser.status).toBe(422);
    const wrongType = await forgot(42);
    expect(wrongType.status).toBe(422);
    const form = await stack.api('POST', '/forgot-password', { form: { username: 'x' } });
    expect(form.status).toBe(415);
  });

  it('When 30 minutes have passed, then the token is refused as expired', async () => {
    const u = await newUser();
    await forgot(u.username);
    const { token } = await resetMail(u.email!);
    stack.clock.advance!(30 * 60 * 1000 + 1000);
    const r = await reset(token, 'too-late-password');
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ detail: 'Invalid or expired reset token' });
    expect((await stack.api('POST', '/v1/login', { form: { username: u.username, password: u.password } })).status).toBe(200);
  });
});
