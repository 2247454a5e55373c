import { randomBytes } from 'node:crypto';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/modules/organisations/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { checkPage, CHROMIUM, ensurePortalBuilt, hasChromium, hasFocus, launch, press, signInByKeyboard, tabTo, typeIn, WIDTHS } from './portal-kit.ts';

if (!hasChromium) console.warn(`SKIPPED test/e2e/portal-dialogs.test.ts: ${CHROMIUM} not found (Debian: apt-get install -y chromium)`);

// The portal around the money: a confirmation dialog before revoking, disabling or
// changing a role (deleting a webhook endpoint: test/webhooks/portal-webhooks-page.test.ts), a revoked client's
// secret gone from the screen, a Top up link on the 402 and on a batch paused for units, a warning five
// minutes before the session ends, fields in error marked, results and errors in live regions, and a
// lost connection said in plain words. Keyboard only, as in the finance officer's walk.

const NETWORK_FAILURE = 'Could not reach the service. Check your connection and try again.';

describe.skipIf(!hasChromium)('dialogs, live regions and the session warning in headless Chromium', () => {
  let stack: Stack;
  let browser: Browser;

  beforeAll(async () => {
    ensurePortalBuilt();
    stack = await startStack({ env: { RATE_LIMIT_PER_TOKEN: '10000', RATE_LIMIT_PER_ORG: '10000' } });
    browser = await launch();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  const newPage = async (width: number = WIDTHS.desktop): Promise<Page> => (await browser.newContext({ viewport: { width, height: 900 } })).newPage();
  /** Whether the focus is inside `container` (a dialog) now. */
  const focusWithin = async (container: Locator) => (await container.evaluate((el) => (el as unknown as { contains(n: unknown): boolean; ownerDocument: { activeElement: unknown } }).contains((el as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement))) === true;
  const assertive = (page: Page) => page.locator('[aria-live="assertive"]');
  const polite = (page: Page) => page.locator('[aria-live="polite"]');

  async function openPage(page: Page, link: string): Promise<void> {
    await press(page, page.getByRole('navigation').getByRole('link', { name: link }));
    await page.getByRole('heading', { level: 1, name: link }).waitFor();
  }

  it('When an administrator revokes an API client, then a modal dialog asks first (focus on Cancel, Tab kept inside, Escape cancels and gives the focus back), and once revoked its secret is gone from the screen', { timeout: 120_000 }, async () => {
    const org = await stack.createOrg();
    const name = `ci-${randomBytes(3).toString('hex')}`;
    const page = await newPage();
    await signInByKeyboard(page, stack.url, org.admin.username, org.admin.password);
    await openPage(page, 'API clients');
    await typeIn(page, page.getByLabel('Name'), name);
    await page.keyboard.press('Enter');
    const secret = (await page.getByTestId('client-secret').textContent())!;
    expect(secret.length).toBeGreaterThan(20);
    // The new secret is read out (polite), not only shown.
    expect(await polite(page).filter({ hasText: secret }).count()).toBe(1);

    const revoke = page.getByRole('button', { name: `Revoke ${name}` });
    await press(page, revoke);
    const dialog = page.getByRole('dialog', { name: `Revoke ${name}?` });
    await dialog.waitFor();
    expect(await hasFocus(dialog.getByRole('button', { name: 'Cancel' }))).toBe(true);
    for (const key of ['Tab', 'Tab', 'Tab', 'Shift+Tab', 'Shift+Tab', 'Shift+Tab', 'Shift+Tab']) {
      await page.keyboard.press(key);
      expect(await focusWithin(dialog), `focus after ${key}`).toBe(true);
    }
    for (const width of Object.values(WIDTHS)) await checkPage(page, 'api-clients-revoke-dialog', width);
    await page.setViewportSize({ width: WIDTHS.desktop, height: 900 });
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await expect.poll(() => hasFocus(revoke)).toBe(true);
    const listed = async () => ((await stack.api('GET', '/v1/api-clients', { token: org.admin.token })).body.data as { name: string }[]).map((c) => c.name);
    expect(await listed()).toEqual([name]);
    expect(await page.getByTestId('client-secret').textContent()).toBe(secret);

    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await press(page, dialog.getByRole('button', { name: `Revoke ${name}` }), ' ');
    await page.getByText(`${name} is revoked: its secret and tokens no longer work.`).waitFor();
    expect(await listed()).toEqual([]);
    expect(await page.getByTestId('client-secret').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    await page.context().close();
  });

  it('When an administrator disables a user or changes a role, then each waits for a confirmation in a dialog; Escape leaves the user as they were', { timeout: 120_000 }, async () => {
    const org = await stack.createOrg();
    const other = `i34-role-${randomBytes(3).toString('hex')}`;
    await createUser(stack.db, { orgId: org.orgId, username: other, password: `pw-${randomBytes(6).toString('hex')}`, role: 'member', requirePasswordChange: false });
    const team = async () => Object.fromEntries(((await stack.api('GET', '/v1/team', { token: org.admin.token })).body.data as { username: string; role: string; disabled: boolean }[]).map((m) => [m.username, m]));
    const page = await newPage();
    await signInByKeyboard(page, stack.url, org.admin.username, org.admin.password);
    await openPage(page, 'Team');

    const disable = page.getByRole('button', { name: `Disable ${org.member.username}` });
    await press(page, disable);
    const asked = page.getByRole('dialog', { name: `Disable ${org.member.username}?` });
    await asked.waitFor();
    await page.keyboard.press('Escape');
    await asked.waitFor({ state: 'detached' });
    await expect.poll(() => hasFocus(disable)).toBe(true);
    expect((await team())[org.member.username]!.disabled).toBe(false);
    await page.keyboard.press('Enter');
    await press(page, asked.getByRole('button', { name: `Disable ${org.member.username}` }));
    await page.getByText(`${org.member.username} is disabled.`).waitFor();
    expect((await team())[org.member.username]!.disabled).toBe(true);

    // Choosing a role in the list changes nothing by itself: its button asks first.
    await tabTo(page, page.getByLabel(`Role of ${other}`));
    await page.keyboard.type('Fin');
    const change = page.getByRole('button', { name: `Change role of ${other}` });
    expect(await change.isEnabled()).toBe(true);
    expect((await team())[other]!.role).toBe('member');
    await press(page, change);
    const roleDialog = page.getByRole('dialog', { name: `Make ${other} a finance officer?` });
    await roleDialog.waitFor();
    for (const width of Object.values(WIDTHS)) await checkPage(page, 'team-role-dialog', width);
    await page.setViewportSize({ width: WIDTHS.desktop, height: 900 });
    await press(page, roleDialog.getByRole('button', { name: 'Change role to Finance officer' }));
    await page.getByText(`${other} is now a finance officer.`).waitFor();
    expect((await team())[other]!.role).toBe('finance');
    await page.context().close();
  });

  it('When a field is left wrong, then it is marked aria-invalid and described by the message, which a live region announces; a lost connection is said in plain words', { timeout: 120_000 }, async () => {
    const org = await stack.createOrg();
    const page = await newPage();
    await signInByKeyboard(page, stack.url, org.admin.username, org.admin.password);
    await openPage(page, 'Top up');
    const units = page.getByLabel('Units', { exact: true });
    await typeIn(page, units, '');
    await page.keyboard.press('Enter');
    const message = assertive(page).locator('.error');
    await message.waitFor();
    expect(await message.textContent()).toMatch(/^Units: /);
    expect(await units.getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await units.getAttribute('aria-describedby'))!.split(' ');
    expect(describedBy).toContain(await message.getAttribute('id'));
    expect(await hasFocus(units)).toBe(true);

    await typeIn(page, units, '500');
    await page.keyboard.press('Enter');
    await page.getByRole('table').getByText('Total to pay').waitFor();
    expect(await units.getAttribute('aria-invalid')).toBeNull();

    // The connection drops: the browser's own "Failed to fetch" is not what a person reads.
    await page.context().route('**/portal/api/**', (route) => route.abort('internetdisconnected'));
    await typeIn(page, units, '600');
    await page.keyboard.press('Enter');
    await assertive(page).getByText(NETWORK_FAILURE).waitFor();
    await page.context().unrouteAll();

    // A value the API refuses marks the field it names: the TIN in the settings.
    await openPage(page, 'Settings');
    const tin = page.getByLabel('Tax identification number (on invoices)');
    await typeIn(page, tin, 'abc');
    await typeIn(page, page.getByLabel('Alert recipients'), `Accounts@Example.test, cfo@example.test`);
    await press(page, page.getByRole('button', { name: 'Save settings' }));
    await assertive(page).getByText(/^tin: tin must be 8 to 20 digits/).waitFor();
    expect(await tin.getAttribute('aria-invalid')).toBe('true');
    await typeIn(page, tin, '12345678-0001');
    await press(page, page.getByRole('button', { name: 'Save settings' }));
    await polite(page).getByText('Settings saved.').waitFor();
    expect(await tin.getAttribute('aria-invalid')).toBeNull();
    const saved = (await stack.api('GET', '/v1/me/organisation', { token: org.admin.token })).body;
    expect({ tin: saved.tin, alert_emails: saved.alert_emails }).toEqual({ tin: '12345678-0001', alert_emails: ['accounts@example.test', 'cfo@example.test'] });
    for (const width of Object.values(WIDTHS)) await checkPage(page, 'settings-alert-recipients', width);
    await page.context().close();
  });

  it('When the wallet is empty, then the 402 on the Verify page and a batch paused for units carry a Top up link for an administrator (a member is told whom to ask)', { timeout: 120_000 }, async () => {
    const org = await stack.createOrg({ units: 0 });
    const page = await newPage();
    await signInByKeyboard(page, stack.url, org.admin.username, org.admin.password);
    await openPage(page, 'Verify');
    await typeIn(page, page.getByLabel('NIN'), '23456789012');
    await page.keyboard.press('Enter');
    const refusal = assertive(page).getByText('Insufficient units in organisation wallet');
    await refusal.waitFor();
    for (const width of Object.values(WIDTHS)) await checkPage(page, 'verify-insufficient-units', width);
    await page.setViewportSize({ width: WIDTHS.desktop, height: 900 });
    await press(page, refusal.getByRole('link', { name: 'Top up' }));
    await page.getByRole('heading', { level: 1, name: 'Top up' }).waitFor();

    // A batch with a live row and no unit pauses, and says where to top up.
    await openPage(page, 'Batches');
    await page.getByLabel('CSV file').setInputFiles({ name: 'empty-wallet.csv', mimeType: 'text/csv', buffer: Buffer.from('nin,client_ref\n23456789013,a\n') });
    await press(page, page.getByRole('button', { name: 'Upload batch' }));
    const batch = page.getByRole('region', { name: /^Batch BAT-/ });
    await batch.getByText('Paused: the wallet has no units left').waitFor({ timeout: 30_000 });
    await batch.getByRole('link', { name: 'Top up' }).waitFor();
    for (const width of Object.values(WIDTHS)) await checkPage(page, 'batch-paused-units', width);
    await page.context().close();

    const member = await newPage(WIDTHS.phone);
    await signInByKeyboard(member, stack.url, org.member.username, org.member.password);
    await openPage(member, 'Verify');
    await typeIn(member, member.getByLabel('NIN'), '23456789014');
    await member.keyboard.press('Enter');
    await assertive(member).getByText('Ask an administrator or a finance officer of your organisation to top up.').waitFor();
    expect(await member.getByRole('main').getByRole('link', { name: 'Top up' }).count()).toBe(0);
    await member.context().close();
  });

  it('When five minutes of the session are left, then a dialog warns; signing in again there keeps the page and a fresh hour, and at the end the portal signs out by itself', { timeout: 120_000 }, async () => {
    const org = await stack.createOrg();
    const page = await newPage();
    // The page's clock is the test's: an hour passes in a call, not in an hour.
    await page.clock.install();
    await signInByKeyboard(page, stack.url, org.admin.username, org.admin.password);
    await openPage(page, 'Settings');
    await typeIn(page, page.getByLabel('Postal address (on invoices)'), 'typed, not saved');

    await page.clock.fastForward('55:30');
    const warning = page.getByRole('dialog', { name: 'Your session ends soon' });
    await warning.waitFor();
    expect(await warning.textContent()).toMatch(/in about [45] minutes/);
    expect(await hasFocus(warning.getByLabel('Password'))).toBe(true);
    for (const width of Object.values(WIDTHS)) await checkPage(page, 'session-warning', width);
    await page.setViewportSize({ width: WIDTHS.desktop, height: 900 });

    await typeIn(page, warning.getByLabel('Password'), org.admin.password);
    await page.keyboard.press('Enter');
    await warning.waitFor({ state: 'detached' });
    await polite(page).getByText(/^You are signed in until \d\d:\d\d\.$/).waitFor();
    // The page is as it was, and the session is a new one with its full hour.
    expect(await page.getByLabel('Postal address (on invoices)').inputValue()).toBe('typed, not saved');
    const left = await page.evaluate(async () => ((await (await fetch('/portal/session')).json()) as { expires_in: number }).expires_in);
    expect(left).toBeGreaterThan(stack.config.JWT_TTL_SECONDS - 60);

    // Warned again near the new end; dismissed with Escape, the portal signs out when the time is up.
    await page.clock.fastForward('55:30');
    await warning.waitFor();
    await page.keyboard.press('Escape');
    await warning.waitFor({ state: 'detached' });
    await page.clock.fastForward('05:00');
    await page.getByText('Your session has ended. Sign in again.').waitFor();
    await page.getByLabel('Username').waitFor();
    await page.context().close();
  });
});
