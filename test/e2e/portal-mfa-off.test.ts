import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { CHROMIUM, ensurePortalBuilt, hasChromium, launch, signIn, totp } from './portal-kit.ts';

if (!hasChromium) console.warn(`SKIPPED test/e2e/portal-mfa-off.test.ts: ${CHROMIUM} not found (Debian: apt-get install -y chromium)`);

// The portal's Account page turns two-factor sign-in off with a code and the current password, and the
// session ends (the API ends every token of the user, as a password change does).
describe.skipIf(!hasChromium)('the portal turns two-factor sign-in off with the password', () => {
  let stack: Stack;
  let browser: Browser;
  let org: OrgFixture;

  beforeAll(async () => {
    ensurePortalBuilt();
    stack = await startStack({ workers: false });
    org = await stack.createOrg();
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  const newPage = async (): Promise<Page> => (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();

  it('when a user turns two-factor sign-in off in the portal, then a wrong password is refused and it stays on; with the password it is off and the session ends', async () => {
    const enrol = await stack.api('POST', '/v1/me/mfa/totp', { token: org.member.token });
    const secret = enrol.body.secret as string;
    const confirm = await stack.api('POST', '/v1/me/mfa/totp/confirm', { token: org.member.token, json: { code: totp(secret) } });
    expect(confirm.status).toBe(200);
    const page = await newPage();
    // The confirming code's step is spent: the next step's code signs in, a recovery code turns it off.
    await signIn(page, stack.url, org.member.username, org.member.password, () => totp(secret, Date.now(), 1));
    await page.getByRole('link', { name: 'Account' }).click();
    // Once on, the page says so and offers no set-up.
    await page.getByText('Two-factor sign-in is on.').waitFor();
    expect(await page.getByRole('button', { name: 'Set up two-factor sign-in' }).count()).toBe(0);
    const off = page.getByRole('form', { name: 'Turn off two-factor sign-in' });
    await off.getByLabel('Code to turn it off').fill('000000');
    await off.getByLabel('Your password, to turn it off').fill('not-the-password');
    await off.getByRole('button', { name: 'Turn off two-factor sign-in' }).click();
    await page.getByText('Current password is incorrect').waitFor();
    await off.getByLabel('Code to turn it off').fill(confirm.body.recovery_codes[0]);
    await off.getByLabel('Your password, to turn it off').fill(org.member.password);
    await off.getByRole('button', { name: 'Turn off two-factor sign-in' }).click();
    await page.getByText('Two-factor sign-in is off. Sign in again with your password.').waitFor();
    expect(await page.evaluate(async () => (await fetch('/portal/api/me')).status)).toBe(401);
    expect((await stack.api('POST', '/v1/login', { form: { username: org.member.username, password: org.member.password } })).status).toBe(200);
    await page.context().close();
  });
});
