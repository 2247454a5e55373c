import { randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { decodeQuotedPrintable, startSmtpSink, type SmtpSink } from '../setup/smtp.ts';
import { waitFor } from '../setup/wait.ts';
import { checkPage, CHROMIUM, ensurePortalBuilt, hasChromium, launch, typeIn, WIDTHS } from '../e2e/portal-kit.ts';

if (!hasChromium) console.warn(`SKIPPED test/team/portal-accept-invitation.test.ts: ${CHROMIUM} not found (Debian: apt-get install -y chromium)`);

// The portal's accept page, on a phone: it says which organisation invites and as what, before the
// password is chosen; the sign-in that follows has the new username filled in.

describe.skipIf(!hasChromium)("the portal's accept page on a phone, in headless Chromium", () => {
  let smtp: SmtpSink;
  let stack: Stack;
  let browser: Browser;
  let org: OrgFixture;

  beforeAll(async () => {
    ensurePortalBuilt();
    smtp = await startSmtpSink();
    stack = await startStack({ env: { SMTP_URL: smtp.url } });
    org = await stack.createOrg();
    browser = await launch();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await smtp?.close();
  });

  it('When a finance officer opens the invitation link on a phone, then the page shows the organisation, the role and the username, and after choosing a password the sign-in has the username filled in', { timeout: 120_000 }, async () => {
    const username = `joiner-${randomBytes(3).toString('hex')}`;
    const email = `${username}@example.test`;
    const password = `chosen-${randomBytes(6).toString('hex')}`;
    expect((await stack.api('POST', '/v1/team/invitations', { token: org.admin.token, json: { email, username, role: 'finance' } })).status).toBe(201);
    const mail = await waitFor(() => smtp.messages.find((m) => m.to.includes(email)), { what: `invitation e-mail to ${email}` });
    const token = /\/portal\/accept-invitation#token=([A-Za-z0-9_-]{43})/.exec(decodeQuotedPrintable(mail.raw))?.[1];
    expect(token).toBeDefined();
    const organisation = await stack.db.oneFirst(sql.type(z.object({ name: z.string() }))`SELECT name FROM organisations WHERE id = ${org.orgId}`);

    const page = await (await browser.newContext({ viewport: { width: WIDTHS.phone, height: 800 }, isMobile: true, hasTouch: true })).newPage();
    await page.goto(`${stack.url}/portal/accept-invitation#token=${token}`);
    await page.getByRole('heading', { name: 'Accept your invitation' }).waitFor();
    const invitation = page.locator('dl.invitation');
    await invitation.waitFor();
    expect(await invitation.locator('dt').allTextContents()).toEqual(['Organisation', 'Role', 'Username']);
    expect(await invitation.locator('dd').allTextContents()).toEqual([organisation, 'finance officer', username]);
    await page.getByText(`You are invited to join ${organisation} as finance officer.`).waitFor();
    await checkPage(page, 'accept-invitation', WIDTHS.phone);

    await typeIn(page, page.getByLabel('Password', { exact: true }), password);
    await typeIn(page, page.getByLabel('Password again'), password);
    await page.keyboard.press('Enter');
    await page.getByText(`Your account ${username} is ready`).waitFor();
    expect(page.url()).toBe(`${stack.url}/portal`);
    // The username is filled in: only the password is typed.
    expect(await page.getByLabel('Username').inputValue()).toBe(username);
    await typeIn(page, page.getByLabel('Password'), password);
    await page.keyboard.press('Enter');
    await page.getByRole('navigation').getByRole('link', { name: 'Overview' }).waitFor();
  });

  it('When the invitation was already used, then the page says so at once and asks for no password', { timeout: 60_000 }, async () => {
    const username = `used-${randomBytes(3).toString('hex')}`;
    const email = `${username}@example.test`;
    expect((await stack.api('POST', '/v1/team/invitations', { token: org.admin.token, json: { email, username, role: 'member' } })).status).toBe(201);
    const mail = await waitFor(() => smtp.messages.find((m) => m.to.includes(email)), { what: `invitation e-mail to ${email}` });
    const token = /\/portal\/accept-invitation#token=([A-Za-z0-9_-]{43})/.exec(decodeQuotedPrintable(mail.raw))![1]!;
    expect((await stack.api('POST', '/v1/invitations/accept', { json: { token, password: 'used-password-1' } })).status).toBe(201);

    const page = await (await browser.newContext({ viewport: { width: WIDTHS.phone, height: 800 } })).newPage();
    await page.goto(`${stack.url}/portal/accept-invitation#token=${token}`);
    await page.getByText('This invitation is not valid: it was already used or revoked, or the link is wrong').waitFor();
    expect(await page.getByLabel('Password again').count()).toBe(0);
  });
});
