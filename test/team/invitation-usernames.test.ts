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
let first: OrgFixture;
let second: OrgFixture;

beforeAll(async () => {
  smtp = await startSmtpSink();
  stack = await startStack({ env: { SMTP_URL: smtp.url, PUBLIC_BASE_URL: 'https://verify.example.test' } });
  first = await stack.createOrg();
  second = await stack.createOrg();
});
afterAll(async () => {
  await stack?.close();
  await smtp?.close();
});

const suffix = () => randomBytes(4).toString('hex');
const invite = (token: string, body: Record<string, unknown>) => stack.api('POST', '/v1/team/invitations', { token, json: body });
const accept = (token: string, password: string) => stack.api('POST', '/v1/invitations/accept', { json: { token, password } });

/** The one e-mail to this address (whose subject matches), decoded, as the mail sink received it. */
async function mailTo(address: string, subject: RegExp) {
  const mail = await waitFor(() => smtp.messages.find((m) => m.to.includes(address) && subject.test(decodeQuotedPrintable(m.raw))), { what: `e-mail to ${address}` });
  return decodeQuotedPrintable(mail.raw);
}

async function invitationToken(email: string) {
  const text = await mailTo(email, /Subject: You are invited/);
  const token = /https:\/\/verify\.example\.test\/portal\/accept-invitation#token=([A-Za-z0-9_-]{43})/.exec(text)?.[1];
  expect(token, text).toBeDefined();
  return { text, token: token! };
}

describe('invitation usernames: held by users only, first acceptance wins', () => {
  it('When two organisations invite the same username, then both are pending; the first acceptance makes the user, the second gets 409 and its inviter is e-mailed', async () => {
    const username = `shared-${suffix()}`;
    const a = await invite(first.admin.token, { email: `a-${username}@example.test`, username, role: 'member' });
    const b = await invite(second.admin.token, { email: `b-${username}@example.test`, username, role: 'finance' });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(a.body.status).toBe('pending');
    expect(b.body.status).toBe('pending');

    const tokenA = (await invitationToken(`a-${username}@example.test`)).token;
    const tokenB = (await invitationToken(`b-${username}@example.test`)).token;
    const won = await accept(tokenA, 'first-password-1');
    expect(won.status).toBe(201);
    expect(won.body).toMatchObject({ username, role: 'member' });

    const lost = await accept(tokenB, 'second-password-1');
    expect(lost.status).toBe(409);
    expect(lost.body.detail).toBe(
      'The username of this invitation is no longer available: the administrator who invited you has been told, and can invite you again with another username',
    );
    // The detail names neither the holder nor its organisation.
    expect(JSON.stringify(lost.body)).not.toContain(String(first.orgId));

    // Its inviter (the second organisation's administrator) is told by e-mail, naming the invitation.
    // The organisations are shared with this file's other tests (one of them races for another username):
    // the notice is the one naming this invitation's address.
    const notice = await mailTo(second.admin.username, new RegExp(`could not be accepted[\\s\\S]*b-${username}@example\\.test`));
    expect(notice).toContain(`"${username}"`);
    expect(notice).toContain(`b-${username}@example.test`);
    expect(notice).toContain('another username');

    // One user; the lost invitation is closed (revoked by the service) and says why on the trail.
    expect(await stack.db.oneFirst(q`SELECT count(*)::int FROM users WHERE username = ${username}`)).toBe(1);
    const listed = await stack.api('GET', '/v1/team/invitations', { token: second.admin.token });
    expect(listed.body.data.find((i: { id: number }) => i.id === b.body.id)).toMatchObject({ status: 'revoked', user_id: null });
    const events = await stack.db.any(q`SELECT action, actor, details FROM audit_events WHERE target = ${`invitation:${b.body.id}`} ORDER BY id`);
    expect(events.map((e) => e.action)).toEqual(['team.invitation_sent', 'team.invitation_revoked']);
    expect(events[1]).toMatchObject({ actor: 'system', details: { reason: 'username_taken' } });
    // The user made is the first organisation's.
    const me = await stack.api('GET', '/v1/me', { token: await stack.login(username, 'first-password-1') });
    expect(me.body.organisation.id).toBe(first.orgId);
  });

  it('When two invitations of one username are accepted at the same moment, then exactly one user is made and the other acceptance gets 409', async () => {
    const username = `race-${suffix()}`;
    expect((await invite(first.admin.token, { email: `ra-${username}@example.test`, username, role: 'member' })).status).toBe(201);
    expect((await invite(second.admin.token, { email: `rb-${username}@example.test`, username, role: 'member' })).status).toBe(201);
    const tokenA = (await invitationToken(`ra-${username}@example.test`)).token;
    const tokenB = (await invitationToken(`rb-${username}@example.test`)).token;
    const answers = await Promise.all([accept(tokenA, 'race-password-1'), accept(tokenB, 'race-password-2')]);
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(await stack.db.oneFirst(q`SELECT count(*)::int FROM users WHERE username = ${username}`)).toBe(1);
  });

  it('When an administrator invites a username some user already holds, then 409 with a detail that does not say who holds it', async () => {
    for (const taken of [second.member.username, first.member.username, second.member.username.toUpperCase()]) {
      const r = await invite(first.admin.token, { email: `t-${suffix()}@example.test`, username: taken, role: 'member' });
      expect(r.status).toBe(409);
      expect(r.body).toEqual({ detail: 'This username is not available: choose another username' });
    }
  });

  it('When the invitation e-mail is read, then it points the invitee to the accept page in plain words and names no API call, for every role', async () => {
    for (const role of ['member', 'finance', 'org_admin']) {
      const username = `mail-${role}-${suffix()}`;
      expect((await invite(first.admin.token, { email: `${username}@example.test`, username, role })).status).toBe(201);
      const { text } = await invitationToken(`${username}@example.test`);
      expect(text).toContain('To accept, open this link within 72 hours and choose your password');
      expect(text).toContain(`Then sign in with the username "${username}"`);
      expect(text).not.toMatch(/POST|\/v1\/|invitations\/accept/);
    }
  });

  it('When the accept page reads an invitation by its token, then it gets the organisation, the role and the username; a used token gets 400', async () => {
    const username = `peek-${suffix()}`;
    expect((await invite(first.admin.token, { email: `${username}@example.test`, username, role: 'finance' })).status).toBe(201);
    const { token } = await invitationToken(`${username}@example.test`);
    const org = await stack.db.oneFirst(q`SELECT name FROM organisations WHERE id = ${first.orgId}`);
    const seen = await stack.api('POST', '/v1/invitations/preview', { json: { token } });
    expect(seen.status).toBe(200);
    expect(seen.body).toEqual({ organisation: org, role: 'finance', username, expires_at: expect.any(String) });
    expect(seen.headers.get('cache-control')).toBe('no-store');
    expect((await accept(token, 'peek-password-1')).status).toBe(201);
    const used = await stack.api('POST', '/v1/invitations/preview', { json: { token } });
    expect(used.status).toBe(400);
    expect(used.body.detail).toBe('This invitation is not valid: it was already used or revoked, or the link is wrong');
    expect((await stack.api('POST', '/v1/invitations/preview', { json: {} })).status).toBe(422);
  });
});
