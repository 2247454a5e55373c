import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { CHROMIUM, ensurePortalBuilt, hasChromium, launch, signIn, WIDTHS } from '../e2e/portal-kit.ts';

if (!hasChromium) console.warn(`SKIPPED test/face/portal-face-page.test.ts: ${CHROMIUM} not found (Debian: apt-get install -y chromium)`);

// The portal's Verify page has a face mode: a file input that opens a phone's front camera
// (capture="user"), the person's consent, and the answer's match and confidence; the settings page
// holds the organisation's threshold.

describe.skipIf(!hasChromium)('portal face mode in headless Chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let org: OrgFixture;

  beforeAll(async () => {
    ensurePortalBuilt();
    stack = await startStack({ face: true });
    org = await stack.createOrg({ units: 5 });
    browser = await launch();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('When a member sends a selfie of Grace Hopper with the fixture NIN 12345678903, then the portal shows a match with its confidence; the admin sets the threshold on the settings page', { timeout: 60_000 }, async () => {
    const page = await (await browser.newContext({ viewport: { width: WIDTHS.phone, height: 900 } })).newPage();
    await signIn(page, stack.url, org.member.username, org.member.password);
    await page.getByRole('link', { name: 'Verify' }).click();
    await page.getByLabel('Look up by').selectOption('face');
    await page.getByLabel('NIN').fill('12345678903');
    const selfie = page.getByLabel('Selfie');
    expect(await selfie.getAttribute('capture')).toBe('user');
    await selfie.setInputFiles('src/simulators/identity-authority/faces/grace-hopper.selfie.jpg');
    await page.getByLabel('The person agreed to this check just now').check();
    await page.getByLabel('Privacy notice version').fill('privacy-2026-03');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Match', exact: true }).waitFor();
    expect(await page.getByRole('article', { name: 'Face match' }).textContent()).toMatch(/Confidence\s*\d+(\.\d)? \(threshold 75\).*Liveness\s*not checked/);
    await page.getByRole('heading', { name: 'Grace Hopper' }).waitFor();
    await page.context().close();

    const admin = await (await browser.newContext({ viewport: { width: WIDTHS.desktop, height: 900 } })).newPage();
    await signIn(admin, stack.url, org.admin.username, org.admin.password);
    await admin.getByRole('link', { name: 'Settings' }).click();
    // The form is filled from the organisation's settings once they load: typed before that, the load
    // would put the saved value back. Wait for the loaded value (an event), then type.
    const threshold = admin.getByLabel('Face match threshold (1-100)');
    await expect.poll(() => threshold.inputValue()).toBe('75');
    await threshold.fill('90');
    await admin.getByRole('button', { name: 'Save settings' }).click();
    await admin.getByText('Settings saved.').waitFor();
    expect((await stack.api('GET', '/v1/me/organisation', { token: org.admin.token })).body.face_match_threshold).toBe(90);
    await admin.context().close();
  });
});
