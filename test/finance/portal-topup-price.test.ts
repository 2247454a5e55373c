import { randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { CHROMIUM, ensurePortalBuilt, hasChromium, launch, signIn, typeIn } from '../e2e/portal-kit.ts';

if (!hasChromium) console.warn(`SKIPPED test/finance/portal-topup-price.test.ts: ${CHROMIUM} not found (Debian: apt-get install -y chromium)`);

// The Top up page prices units as they are typed, and the automatic top-up says what each charge asks
// of the card: both are the server's quote (GET /topup/quote), never a sum made in the browser.

const naira = (kobo: number) => new Intl.NumberFormat('en-NG', { style: 'currency', currency: 'NGN' }).format(kobo / 100);

describe.skipIf(!hasChromium)('top-up prices in the portal, in headless Chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let org: OrgFixture;
  let chargeTotal: number;

  beforeAll(async () => {
    ensurePortalBuilt();
    stack = await startStack({ workers: false });
    org = await stack.createOrg({ units: 40 });
    browser = await launch();
    // An automatic charge under way, as the worker leaves it: its top-up (with its price) and the charge.
    const reference = `TOP-${org.orgId}-${randomBytes(8).toString('hex')}`;
    chargeTotal = 5_467_006;
    await stack.db.query(sql.unsafe`
      INSERT INTO topups (reference, org_id, units, unit_cost_kobo, base_amount, vat_amount, service_charge, total_amount, status)
      VALUES (${reference}, ${org.orgId}, 500, 10000, 5000000, 375000, 92006, ${chargeTotal}, 'pending')`);
    await stack.db.query(sql.unsafe`
      INSERT INTO auto_topup_charges (org_id, status, lagos_day, units, below_units, balance_units, reference, card, card_reference)
      VALUES (${org.orgId}, 'charging', (now() AT TIME ZONE 'Africa/Lagos')::date, 500, 30, 29, ${reference}, 'visa ending 4081', ${reference})`);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  const quote = async (units: number) => (await stack.api('GET', `/v1/topup/quote?units=${units}`, { token: org.admin.token })).body as { total_amount: number; base_amount: number };

  it('When units are typed, then the price follows with no button, an invalid number says why, and the automatic top-up shows each charge in naira with a naira column', { timeout: 90_000 }, async () => {
    const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    await signIn(page, stack.url, org.admin.username, org.admin.password);
    await page.goto(`${stack.url}/portal/top-up`);
    await page.getByRole('heading', { level: 1, name: 'Top up' }).waitFor();
    expect(await page.getByRole('button', { name: 'Show price' }).count()).toBe(0);

    // Typed, nothing pressed: the server's price of 1,200 units appears.
    await typeIn(page, page.getByLabel('Units', { exact: true }), '1200');
    const price = await quote(1200);
    const table = page.getByRole('table').filter({ hasText: 'Price of 1,200 units' });
    await table.getByRole('row', { name: `Total to pay ${naira(price.total_amount)}` }).waitFor();
    await page.getByRole('button', { name: `Pay ${naira(price.total_amount)}` }).waitFor();

    // Units the rule refuses: the server's reason, and no price to pay.
    await typeIn(page, page.getByLabel('Units', { exact: true }), '150');
    await page.getByText('units must be a positive integer multiple of 100').waitFor();
    expect(await page.getByRole('button', { name: /^Pay / }).count()).toBe(0);

    // The automatic top-up: what a charge of 1,000 units asks of the card, all included.
    const auto = page.getByRole('form', { name: 'Automatic top-up' });
    await typeIn(page, auto.getByLabel('Units to buy each time', { exact: true }), '1000');
    const each = await quote(1000);
    await page.getByTestId('auto-units-naira').getByText(`Each charge: ${naira(each.total_amount)} to the card for 1,000 units`, { exact: false }).waitFor();

    // The charges' table has a naira column: what the charge under way asks of the card.
    const charges = page.getByRole('table', { name: 'Automatic top-ups' });
    expect(await charges.getByRole('columnheader').allTextContents()).toContain('Charged');
    await charges.getByRole('row').filter({ hasText: 'visa ending 4081' }).getByRole('cell', { name: naira(chargeTotal), exact: true }).waitFor();
    await page.context().close();
  });
});
