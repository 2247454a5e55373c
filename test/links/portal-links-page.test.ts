import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { openPage, ownAddress, submitPage } from '../setup/links.ts';
import { checkPage, CHROMIUM, ensurePortalBuilt, hasChromium, launch, signIn, WIDTHS } from '../e2e/portal-kit.ts';

if (!hasChromium) console.warn(`SKIPPED test/links/portal-links-page.test.ts: ${CHROMIUM} not found (Debian: apt-get install -y chromium)`);

// The portal's Links page. An administrator makes a link, sees (and copies) its URL once,
// follows its submissions and revokes it behind a confirmation; the person's page then answers 410.

const FIXTURE_VNIN = 'AA000000000001ZZ';

describe.skipIf(!hasChromium)('portal verification links page in headless Chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let org: OrgFixture;

  beforeAll(async () => {
    ensurePortalBuilt();
    stack = await startStack({ env: { TRUST_PROXY: 'loopback' } });
    org = await stack.createOrg({ units: 5 });
    browser = await launch();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('When an administrator creates a link on the Links page, then its URL is shown once and copied, a submission made on it is listed, revoking it asks first and the link then answers 410, and axe finds nothing serious', { timeout: 90_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: WIDTHS.desktop, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.url });
    const page = await context.newPage();
    await signIn(page, stack.url, org.admin.username, org.admin.password);
    await page.getByRole('navigation').getByRole('link', { name: 'Verification links' }).click();
    await page.getByRole('heading', { level: 1, name: 'Verification links' }).waitFor();
    await page.getByText('No links yet.').waitFor();

    await page.getByLabel('Purpose shown to the person').fill('Opening your savings account');
    await page.getByLabel('Ask for a selfie (face match)').uncheck();
    await page.getByLabel('Uses', { exact: true }).fill('2');
    await page.getByLabel('Your reference').fill('applicant-42');
    await page.getByRole('button', { name: 'Create link' }).click();
    const url = (await page.getByTestId('link-url').textContent())!;
    expect(url).toMatch(new RegExp(`^${stack.url}/v/[A-Za-z0-9_-]{22}$`));
    await page.getByRole('button', { name: 'Copy link' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(url);

    const listed = (await stack.api('GET', '/v1/verification-links', { token: org.admin.token })).body.data;
    expect(listed).toMatchObject([{ purpose: 'Opening your savings account', require_face: false, liveness: false, max_uses: 2, uses: 0, client_ref: 'applicant-42', status: 'active' }]);
    const id = listed[0].id as string;
    const row = page.getByRole('row').filter({ hasText: id });
    await row.getByText('0 / 2').waitFor();
    // Without a face, no liveness check either (its box is off and greyed while the face's is off).
    await row.getByRole('cell', { name: 'none', exact: true }).waitFor();
    expect(await page.getByLabel(/^With a liveness check/).isDisabled()).toBe(true);

    // The person submits a fixture vNIN on the page (as its script does); the portal lists the submission.
    const sent = await submitPage(stack, url, { csrf: (await openPage(stack, url)).csrf, vnin: FIXTURE_VNIN }, { from: ownAddress() });
    expect(sent.status, sent.text).toBe(200);
    await page.getByRole('button', { name: `Submissions of ${id}` }).click();
    const subs = page.getByRole('region', { name: `Submissions of ${id}` });
    await subs.getByRole('cell', { name: 'found', exact: true }).waitFor();
    for (const width of Object.values(WIDTHS)) await checkPage(page, 'links-submissions', width);

    // The URL was shown once: after dismissing it, and after a reload, it is not on the page.
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Verification links' }).waitFor();
    await page.getByRole('row').filter({ hasText: id }).getByText('1 / 2').waitFor();
    expect(await page.content()).not.toContain(url);

    await page.getByRole('button', { name: `Revoke ${id}` }).click();
    await page.getByRole('group', { name: `Revoke ${id}?` }).getByRole('button', { name: 'Yes, revoke' }).click();
    await page.getByText(`Link ${id} revoked`).waitFor();
    await page.getByRole('row').filter({ hasText: id }).getByRole('cell', { name: 'Revoked', exact: true }).waitFor();
    expect((await fetch(url)).status).toBe(410);
    await context.close();
  });

  it('When a member opens the Links page by its address, then it is not in the menu, the page says it is not available, and the API refuses the list', { timeout: 60_000 }, async () => {
    const page = await (await browser.newContext({ viewport: { width: WIDTHS.phone, height: 900 } })).newPage();
    await signIn(page, stack.url, org.member.username, org.member.password);
    expect(await page.getByRole('navigation').getByRole('link').allTextContents()).not.toContain('Verification links');
    await page.goto(`${stack.url}/portal/links`);
    await page.getByRole('heading', { name: 'Not available' }).waitFor();
    expect(await page.evaluate(async () => (await fetch('/portal/api/verification-links')).status)).toBe(403);
    await page.context().close();
  });
});
