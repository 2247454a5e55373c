import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { decodeQuotedPrintable, startSmtpSink, type SmtpSink } from '../setup/smtp.ts';
import { waitFor } from '../setup/wait.ts';
import { checkPage, CHROMIUM, ensurePortalBuilt, hasChromium, hasFocus, launch, press, signInByKeyboard, tabTo, typeIn, WIDTHS } from '../e2e/portal-kit.ts';

if (!hasChromium) console.warn(`SKIPPED test/finance/portal-finance-officer.test.ts: ${CHROMIUM} not found (Debian: apt-get install -y chromium)`);

// An administrator invites a finance officer from the Team page; the
// officer accepts from the e-mail's link, signs in, sees the finance menu and naira, tops up, downloads
// the top-up's invoice and the month's statement, and sets automatic top-up with the card just used.
// The keyboard only: Tab, Enter, Space and typing, no click.

const naira = (kobo: number) => new Intl.NumberFormat('en-NG', { style: 'currency', currency: 'NGN' }).format(kobo / 100);

describe.skipIf(!hasChromium)('the finance officer in the portal, in headless Chromium', () => {
  let smtp: SmtpSink;
  let stack: Stack;
  let browser: Browser;
  let org: OrgFixture;

  beforeAll(async () => {
    ensurePortalBuilt();
    smtp = await startSmtpSink();
    stack = await startStack({ env: { SMTP_URL: smtp.url } });
    org = await stack.createOrg({ units: 40 });
    browser = await launch();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await smtp?.close();
  });

  /** The token the invitation e-mail's link carries, as the mail sink received it. */
  async function invitationToken(email: string): Promise<string> {
    const mail = await waitFor(() => smtp.messages.find((m) => m.to.includes(email)), { what: `invitation e-mail to ${email}` });
    const token = /\/portal\/accept-invitation#token=([A-Za-z0-9_-]{43})/.exec(decodeQuotedPrintable(mail.raw))?.[1];
    expect(token).toBeDefined();
    return token!;
  }

  async function downloaded(page: Page, click: () => Promise<void>): Promise<{ name: string; body: Buffer }> {
    const [dl] = await Promise.all([page.waitForEvent('download'), click()]);
    return { name: dl.suggestedFilename(), body: await readFile((await dl.path())!) };
  }

  it('When an administrator invites a finance officer by e-mail and they accept in the portal, then, with the keyboard only, they see the finance menu and naira, top up, download the invoice and the month statement, and set automatic top-up; axe finds nothing serious', { timeout: 180_000 }, async () => {
    const username = `i34-fin-${randomBytes(3).toString('hex')}`;
    const email = `${username}@example.test`;
    const password = `chosen-${randomBytes(6).toString('hex')}`;

    // The administrator invites from the Team page, and revokes a second invitation. Keyboard only:
    // Tab to each control, type, Enter or Space; never a mouse click.
    const adminPage = await (await browser.newContext({ viewport: { width: WIDTHS.desktop, height: 900 } })).newPage();
    await signInByKeyboard(adminPage, stack.url, org.admin.username, org.admin.password);
    await press(adminPage, adminPage.getByRole('navigation').getByRole('link', { name: 'Team' }));
    await adminPage.getByRole('heading', { level: 1, name: 'Team' }).waitFor();
    const inviteForm = adminPage.getByRole('form', { name: 'Invite by e-mail' });
    for (const [who, role] of [[username, 'Finance officer'], [`${username}-x`, 'Team member']] as const) {
      await typeIn(adminPage, inviteForm.getByLabel('E-mail'), `${who}@example.test`);
      await typeIn(adminPage, inviteForm.getByLabel('Username'), who);
      // A closed list takes typed letters: "F" picks Finance officer, "T" Team member.
      await tabTo(adminPage, inviteForm.getByLabel('Role'));
      await adminPage.keyboard.type(role.slice(0, 3));
      expect(await inviteForm.getByLabel('Role').evaluate((el) => (el as unknown as { selectedOptions: { text: string }[] }).selectedOptions[0]!.text)).toBe(role);
      await press(adminPage, inviteForm.getByRole('button', { name: 'Send invitation' }));
      await adminPage.getByText(`Invitation sent to ${who}@example.test`).waitFor();
    }
    await adminPage.getByRole('row').filter({ hasText: email }).getByRole('cell', { name: 'pending' }).waitFor();
    for (const width of Object.values(WIDTHS)) await checkPage(adminPage, 'team-invitations', width);
    await press(adminPage, adminPage.getByRole('button', { name: `Revoke invitation of ${username}-x` }), ' ');
    await adminPage.getByText(`The invitation of ${username}-x is revoked`).waitFor();
    await adminPage.getByRole('row').filter({ hasText: `${username}-x@example.test` }).getByRole('cell', { name: 'revoked' }).waitFor();
    await adminPage.context().close();

    // The invitee opens the e-mail's link, chooses a password (typed twice), and is sent to sign in.
    const token = await invitationToken(email);
    const page = await (await browser.newContext({ viewport: { width: WIDTHS.desktop, height: 900 } })).newPage();
    await page.goto(`${stack.url}/portal/accept-invitation#token=${token}`);
    await page.getByRole('heading', { name: 'Accept your invitation' }).waitFor();
    expect(page.url()).toBe(`${stack.url}/portal/accept-invitation`);
    for (const width of Object.values(WIDTHS)) await checkPage(page, 'accept-invitation', width);
    await typeIn(page, page.getByLabel('Password', { exact: true }), password);
    await typeIn(page, page.getByLabel('Password again'), `${password}-typo`);
    await page.keyboard.press('Enter');
    await page.getByText('The two passwords differ').waitFor();
    // The field in error says so, and points at the message.
    const again = page.getByLabel('Password again');
    expect(await again.getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await again.getAttribute('aria-describedby'))!;
    expect(await page.locator(`[id="${describedBy}"]`).textContent()).toContain('The two passwords differ');
    await typeIn(page, again, password);
    await page.keyboard.press('Enter');
    await page.getByText(`Your account ${username} is ready`).waitFor();
    expect(page.url()).toBe(`${stack.url}/portal`);
    await typeIn(page, page.getByLabel('Username'), username);
    await typeIn(page, page.getByLabel('Password'), password);
    await page.keyboard.press('Enter');
    await page.getByRole('navigation').getByRole('link', { name: 'Overview' }).waitFor();

    // The finance menu; Verify and Batches are not served by a typed address either.
    expect(await page.getByRole('navigation').getByRole('link').allTextContents()).toEqual(['Overview', 'Top up', 'History', 'Audit trail', 'Account']);
    const me = (await stack.api('GET', '/v1/me', { token: await stack.login(username, password) })).body;
    expect(me.role).toBe('finance');
    const unitCost = me.organisation.unit_cost as number;
    await page.getByTestId('balance-value').getByText(`${naira(40 * unitCost)} at ${naira(unitCost)} a unit`).waitFor();
    for (const width of Object.values(WIDTHS)) await checkPage(page, 'finance-overview', width);
    await page.goto(`${stack.url}/portal/verify`);
    await page.getByRole('heading', { name: 'Not available' }).waitFor();
    await page.goto(`${stack.url}/portal`);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();

    // The finance officer tops up at the processor's checkout; the price is in naira.
    await press(page, page.getByRole('navigation').getByRole('link', { name: 'Top up' }));
    await typeIn(page, page.getByLabel('Units', { exact: true }), '500');
    await page.keyboard.press('Enter');
    await page.getByRole('table').getByText('Total to pay').waitFor();
    await press(page, page.getByRole('button', { name: /^Pay ₦\d{1,3}(,\d{3})*\.\d{2}$/ }));
    await press(page, page.getByRole('button', { name: 'Pay', exact: true }));
    await press(page, page.getByRole('link', { name: 'Return to merchant' }));
    await page.getByText(/Credited: 500 units/).waitFor({ timeout: 20_000 });

    // History: the top-up in naira with its invoice; the ledger's top-up line with base, VAT and fee.
    const topup = (await stack.api('GET', '/v1/topups', { token: org.admin.token })).body.data[0];
    expect(topup).toMatchObject({ status: 'credited', invoice_number: expect.stringMatching(/^INV-\d{4}-\d{6}$/) });
    await press(page, page.getByRole('navigation').getByRole('link', { name: 'History' }));
    await page.getByRole('heading', { level: 1, name: 'History' }).waitFor();
    await press(page, page.getByRole('tab', { name: 'Top-ups' }), ' ');
    const row = page.getByRole('row').filter({ hasText: topup.reference });
    await row.getByRole('cell', { name: naira(topup.total_amount), exact: true }).waitFor();
    await row.getByRole('cell', { name: naira(topup.vat_amount), exact: true }).waitFor();
    const invoice = await downloaded(page, () => press(page, row.getByRole('link', { name: `Invoice ${topup.invoice_number}` })));
    expect(invoice.name).toBe(`${topup.invoice_number}.pdf`);
    expect(invoice.body.subarray(0, 5).toString()).toBe('%PDF-');
    for (const width of Object.values(WIDTHS)) await checkPage(page, 'finance-history', width);

    await press(page, page.getByRole('tab', { name: 'Transactions' }), ' ');
    await page
      .getByRole('row')
      .filter({ hasText: topup.reference })
      .getByRole('cell', { name: `${naira(topup.base_amount)} + VAT ${naira(topup.vat_amount)} + processor fee ${naira(topup.service_charge)}`, exact: true })
      .waitFor();

    // This month's statement, as PDF and as CSV, with the top-up in it.
    const month = new Intl.DateTimeFormat('en-CA', { timeZone: 'Africa/Lagos', year: 'numeric', month: '2-digit' }).format(new Date()).slice(0, 7);
    expect(await page.getByLabel('Month').inputValue()).toBe(month);
    const pdf = await downloaded(page, () => press(page, page.getByRole('button', { name: 'Download statement (PDF)' })));
    expect({ name: pdf.name, head: pdf.body.subarray(0, 5).toString() }).toEqual({ name: `statement-${month}.pdf`, head: '%PDF-' });
    const csv = await downloaded(page, () => press(page, page.getByRole('button', { name: 'Download statement (CSV)' }), ' '));
    expect(csv.name).toBe(`statement-${month}.csv`);
    expect(csv.body.toString()).toContain('opening_balance');
    expect(csv.body.toString()).toContain(topup.reference);

    // The monthly e-mail's link: the History page opens on the statements, the month filled in.
    await page.goto(`${stack.url}/portal/history?statement=${month}`);
    await expect.poll(() => hasFocus(page.getByRole('heading', { level: 2, name: 'Statements' }))).toBe(true);
    expect(await page.getByLabel('Month').inputValue()).toBe(month);

    // On the Top up page the finance officer sets automatic top-up, by keyboard, with the card
    // of the top-up just paid; each charge reads in naira, all included (the server's quote); a wrong password is refused.
    await press(page, page.getByRole('navigation').getByRole('link', { name: 'Top up' }));
    const auto = page.getByRole('form', { name: 'Automatic top-up' });
    await page.getByTestId('saved-card').getByText(`Saved card: visa ending 4081, from the top-up ${topup.reference}`).waitFor();
    const typeInto = (label: string, text: string) => typeIn(page, auto.getByLabel(label, { exact: true }), text);
    await press(page, auto.getByLabel('Top up automatically with the saved card'), ' ');
    await typeInto('When the balance falls below (units)', '30');
    await typeInto('Units to buy each time', '1000');
    const each = (await stack.api('GET', '/v1/topup/quote?units=1000', { token: org.admin.token })).body;
    await page.getByTestId('auto-units-naira').getByText(`Each charge: ${naira(each.total_amount)} to the card for 1,000 units (${naira(1000 * unitCost)} at ${naira(unitCost)} a unit`, { exact: false }).waitFor();
    await typeInto('At most, charges a day', '2');
    await typeInto('Your password', `${password}-wrong`);
    await page.keyboard.press('Enter');
    await auto.getByText('Password is incorrect: automatic top-up was not changed').waitFor();
    await typeInto('Your password', password);
    await page.keyboard.press('Enter');
    await auto.getByText('Automatic top-up is on: 1,000 units when the balance falls below 30 units.').waitFor();
    expect(await auto.getByLabel('Your password', { exact: true }).inputValue()).toBe('');
    const setting = (await stack.api('GET', '/v1/settings/auto-topup', { token: await stack.login(username, password) })).body;
    expect(setting).toMatchObject({ enabled: true, below_units: 30, units: 1000, max_per_day: 2, card: { last4: '4081', from_reference: topup.reference } });
    for (const width of Object.values(WIDTHS)) await checkPage(page, 'auto-top-up', width);
    await page.context().close();
  });
});
