import { randomBytes } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lagosMonthOf, previousLagosMonth } from '../../src/lib/lagos-month.ts';
import { createUser, setUserDisabled } from '../../src/modules/organisations/index.ts';
import { mailMonthlyStatements } from '../../src/modules/statements/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { decodeQuotedPrintable, startSmtpSink, type SmtpSink } from '../setup/smtp.ts';
import { waitFor } from '../setup/wait.ts';

// The low-balance alert goes to the addresses an organisation chose and names the
// portal's pages; a monthly e-mail to each finance officer links the statement of the Lagos month that
// ended, once per officer and month however often the job runs.

const q = sql.type(z.record(z.string(), z.any()));

let smtp: SmtpSink;
let stack: Stack;
beforeAll(async () => {
  smtp = await startSmtpSink();
  stack = await startStack({ env: { SMTP_URL: smtp.url, RATE_LIMIT_PER_TOKEN: '10000', RATE_LIMIT_PER_ORG: '10000' } });
});
afterAll(async () => {
  await stack?.close();
  await smtp?.close();
});

const tag = () => randomBytes(4).toString('hex');
const mailsTo = (address: string) => smtp.messages.filter((m) => m.to.includes(address));
const text = (raw: string) => decodeQuotedPrintable(raw);
const settings = (org: OrgFixture, json: unknown) => stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json });

let nin = 31000000000;
async function debit(org: OrgFixture): Promise<void> {
  const r = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: String(++nin), reason: 'corporate' } });
  expect(r.status).toBe(200);
}

/** A finance officer (with an address) of `orgId`, there since `since`. */
async function financeOfficer(orgId: number, since = new Date(Date.now() - 40 * 86_400_000)) {
  const username = `i34-fin-${tag()}`;
  const email = `${username}@finance.example`;
  const password = `pw-${tag()}-${tag()}`;
  const user = await createUser(stack.db, { orgId, username, password, role: 'finance', email, requirePasswordChange: false });
  await stack.db.query(q`UPDATE users SET created_at = ${sql.timestamp(since)} WHERE id = ${user.id}`);
  return { id: Number(user.id), username, email, password };
}

/** An organisation that was there a month and more ago (the statement mail skips organisations newer than the month). */
async function oldOrg(units = 0) {
  const org = await stack.createOrg({ units });
  await stack.db.query(q`UPDATE organisations SET created_at = now() - interval '40 days' WHERE id = ${org.orgId}`);
  return org;
}

describe('several low-balance alert recipients', () => {
  it('When an administrator sets alert_emails, then they are kept lower-cased and once each, the audit trail names the setting without the addresses, and the next alert goes to them (not the administrators) naming the portal pages', async () => {
    const org = await stack.createOrg({ units: 3 });
    const admin = `boss-${tag()}@bank.example`;
    await stack.db.query(q`UPDATE users SET email = ${admin} WHERE username = ${org.admin.username}`);
    const [a, b] = [`alerts-${tag()}@bank.example`, `cfo-${tag()}@bank.example`];
    const set = await settings(org, { low_balance_units: 2, alert_emails: [` ${a.toUpperCase()} `, b, a] });
    expect(set.status).toBe(200);
    expect(set.body.alert_emails).toEqual([a, b]);
    expect((await stack.api('GET', '/v1/me/organisation', { token: org.admin.token })).body.alert_emails).toEqual([a, b]);
    const audit = await stack.db.one(q`SELECT details FROM audit_events WHERE org_id = ${org.orgId} AND action = 'organisation.settings_changed' ORDER BY id DESC LIMIT 1`);
    expect(audit.details).toEqual({ changed: ['low_balance_units', 'alert_emails'], low_balance_units: 2 });

    await debit(org);
    await debit(org);
    const mail = await waitFor(() => smtp.messages.find((m) => m.to.includes(a)), { what: 'the alert to the chosen addresses' });
    expect([...mail.to].sort()).toEqual([a, b].sort());
    expect(mailsTo(admin)).toEqual([]);
    const body = text(mail.raw);
    expect(body).toContain(`${stack.config.publicBaseUrl}/portal/top-up`);
    expect(body).toContain(`${stack.config.publicBaseUrl}/portal/history?statement=${lagosMonthOf(new Date())}`);
    expect(body).not.toMatch(/POST \/v1|\/v1\/topup/);
  });

  it('When alert_emails is emptied, then the administrators hear of a low balance again', async () => {
    const org = await stack.createOrg({ units: 2 });
    const admin = `boss-${tag()}@bank.example`;
    await stack.db.query(q`UPDATE users SET email = ${admin} WHERE username = ${org.admin.username}`);
    expect((await settings(org, { alert_emails: [`x-${tag()}@bank.example`] })).status).toBe(200);
    const cleared = await settings(org, { alert_emails: [], low_balance_units: 2 });
    expect(cleared.body).toMatchObject({ alert_emails: [], low_balance_units: 2 });
    await debit(org);
    await waitFor(() => mailsTo(admin).length === 1, { what: 'the alert to the administrator' });
  });

  it('When alert_emails holds something that is not an address, or more than 10, then 400 names the field and nothing changes; a member or a finance officer may not set it (403)', async () => {
    const org = await stack.createOrg();
    const bad = await settings(org, { alert_emails: ['accounts@bank.example', 'not an address'] });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/^alert_emails\.1: alert_emails must hold e-mail addresses/);
    const many = await settings(org, { alert_emails: Array.from({ length: 11 }, (_, i) => `a${i}@bank.example`) });
    expect(many).toMatchObject({ status: 400, body: { detail: 'alert_emails: alert_emails may hold at most 10 addresses' } });
    expect((await settings(org, { alert_emails: 'accounts@bank.example' })).status).toBe(422);
    expect((await stack.api('GET', '/v1/me/organisation', { token: org.admin.token })).body.alert_emails).toEqual([]);
    expect((await stack.api('PATCH', '/v1/me/organisation', { token: org.member.token, json: { alert_emails: [] } })).status).toBe(403);
    const fin = await financeOfficer(org.orgId);
    const token = await stack.login(fin.username, fin.password);
    expect(await stack.api('PATCH', '/v1/me/organisation', { token, json: { alert_emails: [] } })).toMatchObject({ status: 403, body: { detail: 'Only organisation administrators may do this' } });
  });
});

describe('the monthly statement e-mail to finance officers', () => {
  it('the month that ended is counted in Lagos time (UTC+1): 00:30 on the 1st in Lagos is already the new month', () => {
    expect(previousLagosMonth(new Date('2026-11-30T23:30:00Z'))).toBe('2026-11');
    expect(previousLagosMonth(new Date('2026-11-30T22:30:00Z'))).toBe('2026-10');
    expect(previousLagosMonth(new Date('2027-01-01T00:00:00Z'))).toBe('2026-12');
    expect(previousLagosMonth(new Date('2026-12-31T22:59:59Z'))).toBe('2026-11');
    expect(lagosMonthOf(new Date('2026-11-30T23:00:00Z'))).toBe('2026-12');
  });

  it('When the job runs, then each active finance officer with an address gets one e-mail naming the portal page of the ended month statement; administrators, members, disabled officers and officers who came after the month get none', async () => {
    const org = await oldOrg(5);
    const now = new Date();
    const month = previousLagosMonth(now);
    const officer = await financeOfficer(org.orgId);
    const disabled = await financeOfficer(org.orgId);
    await setUserDisabled(stack.db, { id: disabled.id }, true);
    const newcomer = await financeOfficer(org.orgId, new Date());
    const admin = `boss-${tag()}@bank.example`;
    await stack.db.query(q`UPDATE users SET email = ${admin} WHERE username = ${org.admin.username}`);

    const r = await mailMonthlyStatements({ ...stack.workers!.deps, clock: { now: () => now } }, stack.workers!.deps.logger);
    expect(r.month).toBe(month);
    const mail = await waitFor(() => mailsTo(officer.email)[0], { what: 'the statement e-mail' });
    const body = text(mail.raw);
    expect(body).toContain(`${stack.config.publicBaseUrl}/portal/history?statement=${month}`);
    expect(body).not.toContain('/v1/statements');
    expect(body).toMatch(/Subject: Statement for \w+ \d{4}: Org [0-9a-f]+/);
    const rows = await stack.db.any(q`SELECT user_id::int, month, org_id::int, outbox_id IS NOT NULL AS queued FROM statement_mails WHERE org_id = ${org.orgId}`);
    expect(rows).toEqual([{ user_id: officer.id, month, org_id: org.orgId, queued: true }]);
    // Everyone else's mail would have gone out with this one: the outbox holds nothing more for them.
    const pending = await stack.db.oneFirst(q`SELECT count(*)::int FROM outbox WHERE kind = 'statement_email' AND dedupe_key = ANY(${sql.array([disabled.id, newcomer.id].map((id) => `statement-${id}-${month}`), 'text')})`);
    expect(pending).toBe(0);
    expect(mailsTo(disabled.email).concat(mailsTo(newcomer.email), mailsTo(admin))).toEqual([]);
  });

  it('When the job runs again, twice at once, and on a later day of the month, then no officer gets a second e-mail for the same month (one statement_mails row, one outbox row)', async () => {
    const org = await oldOrg();
    const officers = await Promise.all([financeOfficer(org.orgId), financeOfficer(org.orgId), financeOfficer(org.orgId)]);
    const now = new Date();
    const month = previousLagosMonth(now);
    const deps = { ...stack.workers!.deps, clock: { now: () => now } };
    await Promise.all(Array.from({ length: 5 }, () => mailMonthlyStatements(deps, stack.workers!.deps.logger)));
    // Another day of the same month (the day after, or before when today is the month's last).
    const day = previousLagosMonth(new Date(now.getTime() + 86_400_000)) === month ? 86_400_000 : -86_400_000;
    const later = await mailMonthlyStatements({ ...deps, clock: { now: () => new Date(now.getTime() + day) } }, stack.workers!.deps.logger);
    expect(later).toEqual({ month, queued: 0 });
    const ids = officers.map((o) => o.id);
    expect(await stack.db.oneFirst(q`SELECT count(*)::int FROM statement_mails WHERE user_id = ANY(${sql.array(ids, 'int8')}) AND month = ${month}`)).toBe(3);
    expect(await stack.db.oneFirst(q`SELECT count(*)::int FROM outbox WHERE kind = 'statement_email' AND dedupe_key = ANY(${sql.array(ids.map((id) => `statement-${id}-${month}`), 'text')})`)).toBe(3);
    for (const o of officers) await waitFor(() => mailsTo(o.email).length === 1, { what: `one statement e-mail to ${o.username}` });
    // The database refuses a second row for the same officer and month, whatever path would write it.
    await expect(stack.db.query(q`INSERT INTO statement_mails (user_id, month, org_id) VALUES (${ids[0]!}, ${month}, ${org.orgId})`)).rejects.toThrow(/unique integrity constraint/);
    expect(mailsTo(officers[0]!.email)).toHaveLength(1);
  });

  it('When the worker runs the scheduled job statements.mail, then the officers of the month are mailed through the outbox', async () => {
    const org = await oldOrg();
    const officer = await financeOfficer(org.orgId);
    await stack.workers!.deps.producer.enqueue('statements.mail', {}, { jobId: `statements-mail-test-${tag()}` });
    const mail = await waitFor(() => mailsTo(officer.email)[0], { what: 'the statement e-mail sent by the worker', timeoutMs: 20_000 });
    expect(text(mail.raw)).toContain(`/portal/history?statement=${previousLagosMonth(new Date())}`);
  });
});
