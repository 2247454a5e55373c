import { describe, expect, it } from 'vitest';
import { openSettingsAsNewAdmin, usePortalStack } from '../setup/portal.ts';
import { checkPage, CHROMIUM, hasChromium, press, WIDTHS } from '../e2e/portal-kit.ts';

if (!hasChromium) console.warn(`SKIPPED test/liveness/portal-require-liveness.test.ts: ${CHROMIUM} not found (Debian: apt-get install -y chromium)`);

// The portal's Settings page sets require_liveness; the Verify page's face mode then says that a
// selfie alone will be refused, before anyone sends one.

describe.skipIf(!hasChromium)('require_liveness on the portal', () => {
  const portal = usePortalStack();

  it('When an administrator ticks "Require a liveness check" and saves, then the organisation requires liveness and the face mode of Verify says a selfie alone is refused', { timeout: 120_000 }, async () => {
    const { org, page } = await openSettingsAsNewAdmin(portal);
    const box = page.getByLabel('Require a liveness check with every face match');
    expect(await box.isChecked()).toBe(false);
    await press(page, box, 'Space');
    expect(await box.isChecked()).toBe(true);
    await press(page, page.getByRole('button', { name: 'Save settings' }));
    await page.locator('[aria-live="polite"]').getByText('Settings saved.').waitFor();
    expect((await portal.stack.api('GET', '/v1/me/organisation', { token: org.admin.token })).body.require_liveness).toBe(true);
    for (const width of Object.values(WIDTHS)) await checkPage(page, 'settings-require-liveness', width);

    await page.setViewportSize({ width: WIDTHS.desktop, height: 900 });
    await press(page, page.getByRole('navigation').getByRole('link', { name: 'Verify' }));
    await page.getByRole('heading', { level: 1, name: 'Verify' }).waitFor();
    await page.getByLabel('Look up by').selectOption('face');
    await page.getByRole('note').getByText('Your organisation requires a liveness check with every face match').waitFor();
    expect(await page.getByRole('note').textContent()).toMatch(/a selfie alone is refused \(liveness_required\): make a verification link/);
    await page.context().close();
  });
});
