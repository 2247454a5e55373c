import { describe, expect, it } from 'vitest';
import { openSettingsAsNewAdmin, usePortalStack } from '../setup/portal.ts';
import { checkPage, CHROMIUM, hasChromium, press, typeIn, WIDTHS } from '../e2e/portal-kit.ts';

if (!hasChromium) console.warn(`SKIPPED test/team/portal-support-contact.test.ts: ${CHROMIUM} not found (Debian: apt-get install -y chromium)`);

// The portal's Settings page sets the support contact the link pages show: a sentence naming no way
// to reach anyone is refused on its field; a good one is saved.

describe.skipIf(!hasChromium)('the support contact on the portal settings page', () => {
  const portal = usePortalStack();

  it('When an administrator types a support contact, then a sentence without an e-mail, phone or web address is marked on its field, and a good one is saved', { timeout: 120_000 }, async () => {
    const { org, page } = await openSettingsAsNewAdmin(portal);
    const field = page.getByLabel('Support contact (on verification link pages)');
    await typeIn(page, field, 'Ask at the branch');
    await press(page, page.getByRole('button', { name: 'Save settings' }));
    await page.locator('[aria-live="assertive"]').getByText(/^support_contact: support_contact must be one sentence/).waitFor();
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    await typeIn(page, field, 'Call 0803 123 4567 or write to help@bank.example');
    await press(page, page.getByRole('button', { name: 'Save settings' }));
    await page.locator('[aria-live="polite"]').getByText('Settings saved.').waitFor();
    expect((await portal.stack.api('GET', '/v1/me/organisation', { token: org.admin.token })).body.support_contact).toBe('Call 0803 123 4567 or write to help@bank.example');
    for (const width of Object.values(WIDTHS)) await checkPage(page, 'settings-support-contact', width);
    await page.context().close();
  });
});
