import { randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { verifyWebhookSignature } from '../../clients/typescript/src/index.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { checkPage, CHROMIUM, ensurePortalBuilt, hasChromium, launch, signIn, WIDTHS } from '../e2e/portal-kit.ts';

if (!hasChromium) console.warn(`SKIPPED test/webhooks/portal-webhooks-page.test.ts: ${CHROMIUM} not found (Debian: apt-get install -y chromium)`);

// The portal's Webhooks page. An administrator adds an endpoint pointing at the identity
// simulator's sandbox receiver, sees the signing secret once, sends a test and follows the delivery.

describe.skipIf(!hasChromium)('portal webhooks page in headless Chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let org: OrgFixture;

  beforeAll(async () => {
    ensurePortalBuilt();
    stack = await startStack({ env: { WEBHOOK_POLL_MS: '200' } });
    org = await stack.createOrg({ units: 5 });
    browser = await launch();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('When an administrator adds an endpoint on the Webhooks page, then the secret is shown once, a test is delivered and signed with it, the deliveries list says delivered, and axe finds nothing serious', { timeout: 90_000 }, async () => {
    const name = `portal-${randomBytes(4).toString('hex')}`;
    const hook = `${stack.identitySim.url}/sandbox/hooks/${name}`;
    const context = await browser.newContext({ viewport: { width: WIDTHS.desktop, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.url });
    const page = await context.newPage();
    await signIn(page, stack.url, org.admin.username, org.admin.password);
    await page.getByRole('navigation').getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await page.getByText('No endpoints yet.').waitFor();

    await page.getByLabel('URL').fill(hook);
    // "All events" is on by default; choosing events one by one first turns it off.
    expect(await page.getByLabel('ping').isDisabled()).toBe(true);
    await page.getByLabel('All events, including ones added later').uncheck();
    await page.getByLabel('ping').check();
    await page.getByLabel('verification.completed').check();
    await page.getByLabel('Description').fill('portal test receiver');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = (await page.getByTestId('webhook-secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Copy secret' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(secret);

    const listed = (await stack.api('GET', '/v1/webhook-endpoints', { token: org.admin.token })).body.data;
    expect(listed).toMatchObject([{ url: hook, events: ['ping', 'verification.completed'], description: 'portal test receiver', enabled: true }]);
    const row = page.getByRole('row').filter({ hasText: hook });
    await row.getByText('ping, verification.completed').waitFor();

    await page.getByRole('button', { name: `Send test to ${hook}` }).click();
    await page.getByText(`Test event (ping) sent to ${hook}.`).waitFor();
    const deliveries = page.getByRole('region', { name: `Deliveries to ${hook}` });
    // The list refreshes by itself while a delivery is pending.
    await deliveries.getByRole('row').filter({ hasText: 'ping' }).getByRole('cell', { name: 'delivered', exact: true }).waitFor({ timeout: 30_000 });
    const got = (await (await fetch(hook)).json()) as { data: { headers: Record<string, string>; body: string }[] };
    expect(got.data).toHaveLength(1);
    expect(JSON.parse(got.data[0]!.body)).toMatchObject({ type: 'ping' });
    // The receiver checks the signature with the secret the page showed.
    expect(await verifyWebhookSignature(got.data[0]!.body, got.data[0]!.headers['idverify-signature']!, secret)).toBe(true);

    for (const width of Object.values(WIDTHS)) await checkPage(page, 'webhooks-deliveries', width);

    // Redeliver: a new delivery of the same event, delivered again with the same event id.
    const eventId = JSON.parse(got.data[0]!.body).id as string;
    await deliveries.getByRole('button', { name: `Redeliver ping event ${eventId}` }).click();
    await deliveries.getByText(`The ping event ${eventId} is queued again.`).waitFor();
    await expect.poll(() => deliveries.getByRole('cell', { name: 'delivered', exact: true }).count(), { timeout: 30_000 }).toBe(2);
    const twice = (await (await fetch(hook)).json()) as { data: { body: string }[] };
    expect(twice.data.map((h) => JSON.parse(h.body).id)).toEqual([eventId, eventId]);

    // Rotating shows the new secret once, in place of the old one.
    await page.getByRole('button', { name: `Rotate secret of ${hook}` }).click();
    await page.getByText(`New secret for ${hook}`).waitFor();
    const rotated = (await page.getByTestId('webhook-secret').textContent())!;
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);

    // Once dismissed (or after a reload) the secret is gone from the page for good.
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.getByTestId('webhook-secret').count()).toBe(0);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await page.getByRole('row').filter({ hasText: hook }).waitFor();
    expect(await page.content()).not.toContain(secret);
    expect(await page.content()).not.toContain(rotated);

    // Disable, then delete behind a confirmation.
    await page.getByRole('button', { name: `Disable ${hook}` }).click();
    await page.getByText(`${hook} disabled.`).waitFor();
    expect((await stack.api('GET', '/v1/webhook-endpoints', { token: org.admin.token })).body.data[0].enabled).toBe(false);
    await page.getByRole('button', { name: `Delete ${hook}` }).click();
    await page.getByRole('dialog', { name: 'Delete this endpoint?' }).getByRole('button', { name: 'Delete endpoint' }).click();
    await page.getByText(`Endpoint ${hook} deleted.`).waitFor();
    expect((await stack.api('GET', '/v1/webhook-endpoints', { token: org.admin.token })).body.data).toEqual([]);
    await context.close();
  });

  it('When a member opens the Webhooks page by its address, then it is not offered in the menu, the page says it is not available, and the API refuses the list', { timeout: 60_000 }, async () => {
    const page = await (await browser.newContext({ viewport: { width: WIDTHS.phone, height: 900 } })).newPage();
    await signIn(page, stack.url, org.member.username, org.member.password);
    expect(await page.getByRole('navigation').getByRole('link').allTextContents()).not.toContain('Webhooks');
    await page.goto(`${stack.url}/portal/webhooks`);
    await page.getByRole('heading', { name: 'Not available' }).waitFor();
    expect(await page.evaluate(async () => (await fetch('/portal/api/webhook-endpoints')).status)).toBe(403);
    await page.context().close();
  });
});
