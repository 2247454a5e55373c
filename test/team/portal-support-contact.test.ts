import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../setup/harness.ts';
import { checkPage, CHROMIUM, ensurePortalBuilt, hasChromium, launch, press, signInByKeyboard, typeIn, WIDTHS } from '../e2e/portal-kit.ts';

if (!hasChromium) console.warn(`SKIPPED test/team/portal-support-contact.test.ts: ${CHROMIUM} not found (Debian: apt-get install -y chromium)`);

// The portal's Settings page sets the support contact the link pages show: a sentence naming no way
// to reach anyone is refused on its field; a good one is saved.

describe.skipIf(!hasChromium)('the support contact on the portal settings page', () => {
  let stack: Stack;
  let browser: Browser;

  beforeAll(async () => {
    ensurePortalBuilt();
    stack = await startStack({ workers: false });
    browser = await launch();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('When an administrator types a support contact, then a sentence without an e-mail, phone or web address is marked on its field, and a good one is saved', { timeout: 120_000 }, async () => {
    const org = await stack.createOrg();
    const page: Page = await (await browser.newContext({ viewport: { width: WIDTHS.desktop, height: 900 } })).newPage();
    await signInByKeyboard(page, stack.url, org.admin.username, org.admin.password);
    await press(page, page.getByRole('navigation').getByRole('link', { name: 'Settings' }));
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    const field = page.getByLabel('Support contact (on verification link pages)');
    await typeIn(page, field, 'Ask at the branch');
    await press(page, page.getByRole('button', { name: 'Save settings' }));
    await page.locator('[aria-live="assertive"]').getByText(/^support_contact: support_contact must be one sentence/).waitFor();
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    await typeIn(page, field, 'Call 0803 123 4567 or write to help@bank.example');
    await press(page, page.getByRole('button', { name: 'Save settings' }));
    await page.locator('[aria-live="polite"]').getByText('Settings saved.').waitFor();
    expect((await stack.api('GET', '/v1/me/organisation', { token: org.admin.token })).body.support_contact).toBe('Call 0803 123 4567 or write to help@bank.example');
    for (const width of Object.values(WIDTHS)) await checkPage(page, 'settings-support-contact', width);
    await page.context().close();
  });
});
