import type { Browser, Page } from 'playwright-core';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { HOPPER_NIN, linkReceiver, makeLink, sandboxVnin, type MadeLink } from '../setup/links.ts';
import { decodeQuotedPrintable, startSmtpSink, type SmtpSink } from '../setup/smtp.ts';
import { waitFor } from '../setup/wait.ts';
import { CHROMIUM, checkPage, hasChromium, launch } from '../e2e/portal-kit.ts';

/**
 * The person's page never ends without a next step, at 390 x 844 in Chromium: a wallet that cannot
 * pay turns the person away with the organisation's support contact and a "Try again" that keeps what
 * they gave, and the organisation hears of it (a refused submission, its webhook, one e-mail an hour);
 * a reload at the vNIN step keeps the step; the USSD code copies; an expired link shows the support
 * contact; a refused camera says how to allow it again. axe-core finds no violation at all on each state.
 */
if (!hasChromium) console.warn(`SKIPPED test/links/link-page-no-dead-ends.test.ts: ${CHROMIUM} not found (Debian: apt-get install -y chromium)`);

const PHONE = { width: 390, height: 844 };
const SHOTS = 'docs/links';
const CONTACT = 'Call 0803 123 4567 (9am to 5pm) or write to help@bank.example';
const q = sql.type(z.record(z.string(), z.any()));

describe.skipIf(!hasChromium)('the verification link page has no dead ends (Chromium, 390 x 844)', () => {
  let stack: Stack;
  let smtp: SmtpSink;
  let browser: Browser;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    stack = await startStack({ env: { SMTP_URL: smtp.url } });
    browser = await launch();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await smtp?.close();
  });

  const phone = async () => (await browser.newContext({ viewport: PHONE, hasTouch: true, isMobile: true, deviceScaleFactor: 1 })).newPage();
  /** axe with no violation of any impact, no sideways scroll, and the state's screenshot. */
  const state = (page: Page, file: string) => checkPage(page, file, PHONE.width, { height: PHONE.height, dir: SHOTS, file, anyImpact: true });


  async function withContact(org: OrgFixture): Promise<void> {
    const r = await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: { support_contact: CONTACT } });
    expect(r.status, r.text).toBe(200);
  }
  const orgName = (org: OrgFixture) => stack.db.oneFirst(sql.type(z.object({ name: z.string() }))`SELECT name FROM organisations WHERE id = ${org.orgId}`);
  const linkFor = (org: OrgFixture, body: Record<string, unknown> = {}): Promise<MadeLink> => makeLink(stack, org.admin.token, { require_face: false, ...body });
  const submissions = async (org: OrgFixture, id: string) => (await stack.api('GET', `/v1/verification-links/${id}`, { token: org.admin.token })).body.submissions;

  async function toVnin(page: Page): Promise<void> {
    await page.getByLabel('I agree').check();
    await page.getByRole('button', { name: 'Continue' }).first().click();
    await page.getByRole('heading', { name: 'Your virtual NIN' }).waitFor();
  }

  it('When the wallet cannot pay, then the person sees the support contact and a "Try again" that keeps their vNIN; the link lists a refused submission, a webhook is sent, and the administrators and finance officers get one e-mail (none for a second refusal within the hour)', { timeout: 120_000 }, async () => {
    const org = await stack.createOrg({ units: 0 });
    const name = await orgName(org);
    const adminEmail = `admin-${org.orgId}@bank.example`;
    await stack.db.query(q`UPDATE users SET email = ${adminEmail} WHERE username = ${org.admin.username}`);
    const finance = await stack.addUser(org.orgId, { role: 'finance', email: `finance-${org.orgId}@bank.example` });
    expect(finance.username).toBeTruthy();
    await withContact(org);
    const hooks = await linkReceiver(stack, org);
    const link = await linkFor(org, { client_ref: 'no-units' });

    const page = await phone();
    const loaded: Promise<number>[] = [];
    page.on('response', (r) => loaded.push(r.request().sizes().then((s) => s.responseBodySize + s.responseHeadersSize)));
    await page.goto(link.url, { waitUntil: 'load' });
    const firstLoad = (await Promise.all(loaded)).reduce((a, b) => a + b, 0);
    expect(firstLoad).toBeLessThanOrEqual(60 * 1024);

    await toVnin(page);
    const vnin = await sandboxVnin(stack, HOPPER_NIN);
    await page.getByLabel('vNIN', { exact: true }).fill(vnin);
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('heading', { name: 'Not sent' }).waitFor({ timeout: 30_000 });
    expect(await page.locator('#contact').innerText()).toBe(`Need help? ${name}: ${CONTACT}`);
    await page.getByRole('button', { name: 'Try again' }).waitFor();
    await state(page, '12-cannot-pay');

    const [refused] = await submissions(org, link.id);
    expect(refused).toMatchObject({ reference_id: null, status: 'refused', code: 'insufficient_units', face: null });
    const hook = await waitFor(async () => (await hooks.received()).find((h) => (JSON.parse(h.body) as { data: { link_id: string } }).data.link_id === link.id), { what: 'the refused submission webhook' });
    expect((JSON.parse(hook.body) as { data: unknown }).data).toEqual({ link_id: link.id, client_ref: 'no-units', reference_id: null, status: 'refused', code: 'insufficient_units', face: null, verdict: 'not_verified', verdict_reasons: ['refused'] });
    const [mail] = await smtp.waitFor(1, 20_000).then((all) => all.filter((m) => m.to.includes(adminEmail)));
    expect(mail!.to.sort()).toEqual([adminEmail, `finance-${org.orgId}@bank.example`].sort());
    const text = decodeQuotedPrintable(mail!.raw);
    expect(text).toContain(link.id);
    expect(text).not.toMatch(new RegExp(`${vnin}|Grace|Hopper`));

    // Try again: back to send with the vNIN kept; refused again, within the hour: held back, not mailed.
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.getByRole('heading', { name: 'Send' }).waitFor();
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('heading', { name: 'Not sent' }).waitFor({ timeout: 30_000 });
    const window = await waitFor(async () => {
      const w = await stack.db.maybeOne(q`SELECT held_back, outbox_id FROM mail_windows WHERE org_id = ${org.orgId} AND topic = 'link_refused'`);
      return w && w.held_back === 1 ? w : undefined;
    }, { what: 'the second refusal counted in the hour' });
    expect(window.outbox_id).not.toBeNull();
    expect(await stack.db.oneFirst(q`SELECT count(*)::int AS n FROM outbox WHERE kind = 'link_refused_email'`)).toBe(1);
    expect((await submissions(org, link.id)).map((s: { status: string; code: string }) => [s.status, s.code])).toEqual([['refused', 'insufficient_units'], ['refused', 'insufficient_units']]);
    expect((await stack.api('GET', `/v1/verification-links/${link.id}`, { token: org.admin.token })).body.uses).toBe(0);
    await page.context().close();
  });

  it('When the page is reloaded at the vNIN step or after it, then it comes back at the vNIN step, with only the step and the link in session storage; the USSD code copies, and "not linked" has an answer', { timeout: 60_000 }, async () => {
    const org = await stack.createOrg();
    const link = await linkFor(org);
    const page = await phone();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(stack.url).origin });
    await page.goto(link.url.replace(new URL(link.url).origin, stack.url));
    await toVnin(page);
    await page.reload();
    await page.getByRole('heading', { name: 'Your virtual NIN' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Your virtual NIN' }).isVisible()).toBe(true);

    await page.getByRole('button', { name: 'Copy the code' }).click();
    await page.getByText('Copied. Open your phone').waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(`*346*3*<NIN>*${stack.config.nimcEnterpriseCode}#`);
    await page.getByText('My phone number is not linked to my NIN').click();
    await page.getByText('The code and the NIMC app both need the phone number linked to your NIN').waitFor();
    await state(page, '13-vnin-help');

    await page.getByLabel('vNIN', { exact: true }).fill('AA000000000001ZZ');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Send' }).waitFor();
    const stored = await page.evaluate(() => JSON.stringify(Object.fromEntries(Object.entries(sessionStorage))));
    expect(JSON.parse(stored)).toEqual({ 'verification-link-step': JSON.stringify({ link: new URL(link.url).pathname, step: 'send' }) });
    await page.reload();
    await page.getByRole('heading', { name: 'Your virtual NIN' }).waitFor();
    expect(await page.getByLabel('vNIN', { exact: true }).inputValue()).toBe('');
    await page.context().close();
  });

  it('When NIMC does not know the vNIN, then the vNIN step names the reference, links the receipt (not verified: no record) and shows the support contact; the next vNIN is verified, and that result too shows the contact and its receipt', { timeout: 90_000 }, async () => {
    const org = await stack.createOrg({ units: 5 });
    const name = await orgName(org);
    await withContact(org);
    const link = await linkFor(org);
    const page = await phone();
    await page.goto(link.url);
    await toVnin(page);
    // The fixture vNIN NIMC does not know: a verification is recorded (free), so there is a receipt.
    await page.getByLabel('vNIN', { exact: true }).fill('AA000000000009ZZ');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'NIMC does not know this vNIN' }).waitFor({ timeout: 30_000 });
    await page.getByRole('heading', { name: 'Your virtual NIN' }).waitFor();
    expect(await page.getByLabel('vNIN', { exact: true }).inputValue()).toBe('AA000000000009ZZ');
    const [refused] = await submissions(org, link.id);
    expect(refused).toMatchObject({ status: 'refused', code: 'vnin_not_found', verdict: 'not_verified', verdict_reasons: ['not_found'] });
    expect(await page.locator('#kept-ref').innerText()).toContain(refused.reference_id);
    expect(await page.locator('#contact').innerText()).toBe(`Need help? ${name}: ${CONTACT}`);
    const toReceipt = page.getByRole('link', { name: /^Your receipt/ });
    expect(await toReceipt.isVisible()).toBe(true);
    await state(page, '24-vnin-not-found-receipt');
    const receipt = await (await fetch(`${stack.url}${await toReceipt.getAttribute('href')}`)).text();
    expect(receipt).toContain('Not verified: no record was found');
    expect(receipt).toContain(refused.reference_id);

    // Another vNIN, from the same page: verified; the result shows the contact and its own receipt.
    await page.getByLabel('vNIN', { exact: true }).fill('AA000000000001ZZ');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('heading', { name: 'You are verified' }).waitFor({ timeout: 30_000 });
    expect(await page.locator('#contact').innerText()).toBe(`Need help? ${name}: ${CONTACT}`);
    expect(await page.locator('#kept-ref').isVisible()).toBe(false);
    const href = await page.getByRole('link', { name: /^Your receipt/ }).getAttribute('href');
    const verified = (await (await fetch(`${stack.url}${href}.json`)).json()) as { record_id: string; results: Record<string, unknown> };
    expect(verified.record_id).not.toBe(refused.reference_id);
    expect(verified.results).toMatchObject({ verification: 'found', verdict: 'verified' });
    await state(page, '25-verified-contact');
    await page.context().close();
  });

  it('When the link has expired, then its page names the support contact and the next step', { timeout: 60_000 }, async () => {
    const org = await stack.createOrg();
    const name = await orgName(org);
    await withContact(org);
    const link = await linkFor(org);
    await stack.db.query(sql.unsafe`UPDATE verification_links SET expires_at = now() - interval '1 minute', created_at = now() - interval '2 hours' WHERE id = ${link.id}`);
    const page = await phone();
    expect((await page.goto(link.url))?.status()).toBe(410);
    expect(await page.locator('main').innerText()).toBe(
      `This link no longer works\n\nThis verification link has expired.\n\nAsk ${name}, who sent you this link, for a new one.\n\nNeed help? ${name}: ${CONTACT}`,
    );
    await state(page, '14-expired-contact');
    await page.context().close();
  });

  it('When the camera is refused, then the page says how to allow it on Android Chrome and iPhone Safari, and the photo fallback is a large button', { timeout: 60_000 }, async () => {
    const org = await stack.createOrg();
    const link = await linkFor(org, { require_face: true });
    // A camera there, and every permission prompt answered no: as a person tapping "Block".
    const denying = await launch(['--use-fake-device-for-media-stream', '--deny-permission-prompts']);
    try {
      const page = await (await denying.newContext({ viewport: PHONE, hasTouch: true, isMobile: true, deviceScaleFactor: 1 })).newPage();
      await page.goto(link.url);
      await toVnin(page);
      await page.getByLabel('vNIN', { exact: true }).fill('AA000000000003ZZ');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Your selfie' }).waitFor();
      await page.getByRole('button', { name: 'Use the camera' }).click();
      await page.getByRole('alert').filter({ hasText: 'The camera is not allowed for this page' }).waitFor();
      expect(await page.getByRole('alert').innerText()).toMatch(/Android \(Chrome\).+Permissions, Camera, Allow.+iPhone \(Safari\).+Website Settings, Camera, Allow/);
      const box = await page.locator('label[for="file"]').boundingBox();
      expect(box!.height).toBeGreaterThanOrEqual(48);
      expect(box!.width).toBeGreaterThanOrEqual(300);
      await state(page, '15-camera-refused');
    } finally {
      await denying.close();
    }
  });
});
