import { randomBytes } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { decodeQuotedPrintable, startSmtpSink, type SmtpSink } from '../setup/smtp.ts';
import { waitFor } from '../setup/wait.ts';

const q = sql.type(z.record(z.string(), z.any()));

let smtp: SmtpSink;
let stack: Stack;
let org: OrgFixture;

beforeAll(async () => {
  smtp = await startSmtpSink();
  stack = await startStack({ manualClock: new Date(), env: { SMTP_URL: smtp.url, PUBLIC_BASE_URL: 'https://verify.example.test' } });
  org = await stack.createOrg();
});
afterAll(async () => {
  await stack?.close();
  await smtp?.close();
});

const suffix = () => randomBytes(4).toString('hex');
const invite = (token: string, body: Record<string, unknown>) => stack.api('POST', '/v1/team/invitations', { token, json: body });
const accept = (token: string, password: string) => stack.api('POST', '/v1/invitations/accept', { json: { token, password } });

/** The invitation e-mail to this address, as the mail sink received it, and the token its link carries. */
async function invitationMail(email: string) {
  const mail = await waitFor(() => smtp.messages.find((m) => m.to.includes(email)), { what: `invitation e-mail to ${email}` });
  const text = decodeQuotedPrintable(mail.raw);
  const token = /https:\/\/verify\.example\.test\/portal\/accept-invitation#token=([A-Za-z0-9_-]{43})/.exec(text)?.[1];
  expect(token, text).toBeDefined();
  return { text, token: token! };
}

describe('invitations', () => {
  it('an administrator invites by e-mail; the link (valid 72 hours) lets the invitee choose a password, which makes the user with the role; the token is stored only as a digest', async () => {
    const username = `invitee-${suffix()}`;
    const email = `${username}@example.test`;
    const sent = await invite(org.admin.token, { email, username, role: 'finance' });
    expect(sent.status).toBe(201);
    expect(sent.body).toMatchObject({ email, username, role: 'finance', status: 'pending', accepted_at: null });
    expect(new Date(sent.body.expires_at).getTime() - new Date(sent.body.created_at).getTime()).toBe(72 * 3600_000);

    const { text, token } = await invitationMail(email);
    expect(text).toContain('Subject: You are invited to');
    expect(text).toContain('within 72 hours');
    expect(text).toContain(`"${username}"`);
    // Only the SHA-256 of the token is kept; the sent e-mail's body is gone from the outbox.
    const row = await stack.db.one(q`SELECT encode(token_hash, 'hex') AS h FROM invitations WHERE id = ${sent.body.id}`);
    expect(row.h).toBe((await import('node:crypto')).createHash('sha256').update(token).digest('hex'));
    expect(await stack.db.oneFirst(q`SELECT count(*)::int FROM invitations WHERE encode(token_hash, 'escape') LIKE ${'%' + token + '%'}`)).toBe(0);

    // Before acceptance there is no such user.
    expect((await stack.api('POST', '/v1/login', { form: { username, password: 'chosen-password-1' } })).status).toBe(401);
    const made = await accept(token, 'chosen-password-1');
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ username, role: 'finance' });
    const signedIn = await stack.login(username, 'chosen-password-1');
    const me = await stack.api('GET', '/v1/me', { token: signedIn });
    expect(me.body).toMatchObject({ username, role: 'finance', organisation: { id: org.orgId } });

    const listed = await stack.api('GET', '/v1/team/invitations', { token: org.admin.token });
    expect(listed.body.data.find((i: { id: number }) => i.id === sent.body.id)).toMatchObject({ status: 'accepted', user_id: made.body.id });
    const events = await stack.db.anyFirst(q`SELECT action FROM audit_events WHERE target = ${`invitation:${sent.body.id}`} ORDER BY id`);
    expect(events).toEqual(['team.invitation_sent', 'team.invitation_accepted']);
  });

  it('an invitation carries its sender\'s authority: once that administrator is disabled (or demoted), the invitation makes no user', async () => {
    // A second administrator, made by invitation, invites an administrator of its own, then is disabled.
    const second = `second-${suffix()}`;
    expect((await invite(org.admin.token, { email: `${second}@example.test`, username: second, role: 'org_admin' })).status).toBe(201);
    expect((await accept((await invitationMail(`${second}@example.test`)).token, 'second-password-1')).status).toBe(201);
    const secondToken = await stack.login(second, 'second-password-1');
    const backdoor = `backdoor-${suffix()}`;
    expect((await invite(secondToken, { email: `${backdoor}@example.test`, username: backdoor, role: 'org_admin' })).status).toBe(201);
    const { token } = await invitationMail(`${backdoor}@example.test`);
    const secondId = await stack.db.oneFirst(q`SELECT id::int FROM users WHERE username = ${second}`);
    expect((await stack.api('PATCH', `/v1/team/${secondId}`, { token: org.admin.token, json: { disabled: true } })).status).toBe(200);
    const refused = await accept(token, 'backdoor-password-1');
    expect({ status: refused.status, body: refused.body }).toEqual({ status: 400, body: { detail: 'This invitation is no longer valid: the administrator who sent it may no longer invite; ask for a new one' } });
    expect(await stack.db.oneFirst(q`SELECT count(*)::int FROM users WHERE username = ${backdoor}`)).toBe(0);
  });

  it('an invitation is usable once: a second acceptance, even at the same time, is refused and makes no second user', async () => {
    const username = `once-${suffix()}`;
    const email = `${username}@example.test`;
    expect((await invite(org.admin.token, { email, username, role: 'member' })).status).toBe(201);
    const { token } = await invitationMail(email);
    const both = await Promise.all([accept(token, 'first-password-1'), accept(token, 'second-password-2')]);
    expect(both.map((r) => r.status).sort()).toEqual([201, 400]);
    expect(both.find((r) => r.status === 400)!.body).toEqual({ detail: 'This invitation is not valid: it was already used or revoked, or the link is wrong' });
    expect((await accept(token, 'third-password-3')).status).toBe(400);
    expect(await stack.db.oneFirst(q`SELECT count(*)::int FROM users WHERE username = ${username}`)).toBe(1);
  });

  it('an invitation expires after 72 hours; a revoked one stops working; both are listed so', async () => {
    const late = `late-${suffix()}`;
    const gone = `gone-${suffix()}`;
    const a = await invite(org.admin.token, { email: `${late}@example.test`, username: late, role: 'member' });
    const b = await invite(org.admin.token, { email: `${gone}@example.test`, username: gone, role: 'member' });
    const lateMail = await invitationMail(`${late}@example.test`);
    const goneMail = await invitationMail(`${gone}@example.test`);

    const revoked = await stack.api('DELETE', `/v1/team/invitations/${b.body.id}`, { token: org.admin.token });
    expect(revoked.body).toMatchObject({ status: 'revoked' });
    expect((await stack.api('DELETE', `/v1/team/invitations/${b.body.id}`, { token: org.admin.token })).status).toBe(404);
    expect((await accept(goneMail.token, 'some-password-1')).body.detail).toBe('This invitation is not valid: it was already used or revoked, or the link is wrong');

    stack.clock.advance!(72 * 3600_000 + 1000);
    // The administrators' tokens expired too.
    org.admin.token = await stack.login(org.admin.username, org.admin.password);
    org.member.token = await stack.login(org.member.username, org.member.password);
    const expired = await accept(lateMail.token, 'some-password-1');
    expect({ status: expired.status, body: expired.body }).toEqual({ status: 400, body: { detail: 'This invitation has expired: ask an administrator of the organisation for a new one' } });
    const listed = (await stack.api('GET', '/v1/team/invitations', { token: org.admin.token })).body.data;
    expect(listed.find((i: { id: number }) => i.id === a.body.id).status).toBe('expired');
    expect(listed.find((i: { id: number }) => i.id === b.body.id).status).toBe('revoked');
    expect(await stack.db.oneFirst(q`SELECT count(*)::int FROM users WHERE username IN (${late}, ${gone})`)).toBe(0);
  });

  it('only administrators invite, list and revoke; a taken username, a bad role or a weak password is refused', async () => {
    const username = `nope-${suffix()}`;
    expect((await invite(org.member.token, { email: 'x@example.test', username, role: 'member' })).body).toEqual({ detail: 'Only organisation administrators may do this' });
    expect((await stack.api('GET', '/v1/team/invitations', { token: org.member.token })).status).toBe(403);
    expect((await invite(org.admin.token, { email: 'x@example.test', username: org.member.username, role: 'member' })).status).toBe(409);
    expect((await invite(org.admin.token, { email: 'x@example.test', username, role: 'platform_admin' })).status).toBe(400);
    expect((await invite(org.admin.token, { email: `${username}@example.test`, username, role: 'member' })).status).toBe(201);
    expect((await invite(org.admin.token, { email: `${username}@example.test`, username, role: 'member' })).status).toBe(409);
    const { token } = await invitationMail(`${username}@example.test`);
    const weak = await accept(token, 'short');
    expect(weak.status).toBe(400);
    expect(weak.body.detail).toMatch(/at least 8 characters/);
    // A refused password leaves the invitation usable.
    expect((await accept(token, 'long-enough-password')).status).toBe(201);
  });

  it('an invitation is checked field by field: missing 422, bad e-mail or role 400, a form 415, another organisation\'s username 409; nothing is sent', async () => {
    const other = await stack.createOrg();
    const username = `chk-${suffix()}`;
    const missing = await invite(org.admin.token, { username, role: 'member' });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toBe('Field required: email');
    const badEmail = await invite(org.admin.token, { username, email: 'not-an-address', role: 'member' });
    expect(badEmail.status).toBe(400);
    expect(badEmail.body).toEqual({ detail: 'email: must be an e-mail address' });
    const role = await invite(org.admin.token, { username, email: `${username}@example.test`, role: 'platform_admin' });
    expect(role.status).toBe(400);
    expect(role.body.detail).toMatch(/^role: /);
    const form = await stack.api('POST', '/v1/team/invitations', { token: org.admin.token, form: { username, email: `${username}@example.test`, role: 'member' } });
    expect(form.status).toBe(415);
    const taken = await invite(org.admin.token, { username: other.member.username.toUpperCase(), email: 'y@example.test', role: 'member' });
    expect(taken.status).toBe(409);
    const rows = await stack.db.oneFirst(sql.unsafe`SELECT count(*)::int FROM invitations WHERE username IN (${username}, ${other.member.username})`);
    expect(rows).toBe(0);
  });
});
