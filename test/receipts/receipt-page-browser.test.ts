import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../setup/harness.ts';
import { FACES, HOPPER_NIN, makeLink, sandboxVnin } from '../setup/links.ts';
import { startSmtpSink, type SmtpSink } from '../setup/smtp.ts';
import { CHROMIUM, checkPage, hasChromium, launch } from '../e2e/portal-kit.ts';

/**
 * The person's receipt in headless Chromium at phone size (390 x 844), after a link's submission
 * with a selfie: the result page links to it; the page, its PDF (read back with pdftotext) and its
 * JSON name no NIN, vNIN, name or photo, and the JSON holds every ISO/IEC TS 27560 field with the
 * face result; axe-core finds no serious or critical violation on the receipt and on its "sent"
 * state; the link page's first load stays under 60 KB compressed. Screenshots go to docs/receipts/.
 */
if (!hasChromium) console.warn(`SKIPPED test/receipts/receipt-page-browser.test.ts: ${CHROMIUM} not found (Debian: apt-get install -y chromium)`);

const run = promisify(execFile);
const PHONE = { width: 390, height: 844 };
const SHOTS = 'docs/receipts';
const FIELDS_27560 = [
  'schema_version', 'record_id', 'receipt_id', 'pii_principal_id', 'language', 'jurisdiction', 'party_identification', 'pii_controllers', 'controller',
  'purpose', 'lawful_basis', 'collection_method', 'pii_information', 'retention_period', 'results', 'event', 'privacy_notice', 'recipient_third_parties',
  'privacy_rights', 'withdrawal_method',
];

const AXE = readFileSync('node_modules/axe-core/axe.min.js', 'utf8');

/** Every axe-core violation of the page, whatever its impact (checkPage fails on serious and critical ones). */
async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    const r = await (globalThis as unknown as { axe: { run(o: unknown): Promise<{ violations: { id: string; impact: string }[] }> } }).axe.run({ resultTypes: ['violations'] });
    return r.violations.map((v) => `${v.id} (${v.impact})`);
  });
}

describe.skipIf(!hasChromium)('the consent receipt in Chromium at 390 x 844', () => {
  let stack: Stack;
  let smtp: SmtpSink;
  let browser: Browser;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'receipt-'));
    smtp = await startSmtpSink();
    stack = await startStack({ face: true, env: { SMTP_URL: smtp.url } });
    browser = await launch();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await smtp?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('When the person sent a selfie and it matched, then the result page links to a receipt page, PDF and JSON that hold the 27560 fields and the face result and name no one, and it can be e-mailed', { timeout: 120_000 }, async () => {
    const org = await stack.createOrg({ units: 5 });
    const link = await makeLink(stack, org.admin.token, { purpose: 'Opening your savings account' });
    const page = await (await browser.newContext({ viewport: PHONE, hasTouch: true, isMobile: true, deviceScaleFactor: 1 })).newPage();
    const loaded: Promise<number>[] = [];
    page.on('response', (r) => loaded.push(r.request().sizes().then((s) => s.responseBodySize + s.responseHeadersSize)));
    await page.goto(link.url, { waitUntil: 'load' });
    const firstLoad = (await Promise.all(loaded)).reduce((a, b) => a + b, 0);
    expect(firstLoad).toBeLessThanOrEqual(60 * 1024);

    await page.getByLabel('I agree').check();
    await page.getByRole('button', { name: 'Continue' }).click();
    const vnin = await sandboxVnin(stack, HOPPER_NIN);
    await page.getByLabel('vNIN', { exact: true }).fill(vnin);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByLabel('Or choose a photo of your face').setInputFiles(`${FACES}grace-hopper.selfie.jpg`);
    await page.getByRole('button', { name: 'Use this picture' }).click();
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const toReceipt = page.getByRole('link', { name: /^Your receipt/ });
    await toReceipt.waitFor({ timeout: 60_000 });

    const [s] = (await stack.api('GET', `/v1/verification-links/${link.id}`, { token: org.admin.token })).body.submissions;
    const record = (await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: s.reference_id } })).body.data as Record<string, string>;
    expect(record.nin).toBe(HOPPER_NIN);
    const personal = [vnin, record.nin, record.fname, record.lname, record.mname, record.phone, record.image?.slice(0, 40)].filter((v): v is string => typeof v === 'string' && v.length >= 3);
    const photo = Buffer.from(record.image!, 'base64').subarray(200, 232);

    await toReceipt.click();
    await page.getByRole('heading', { level: 1, name: 'Your consent receipt' }).waitFor();
    const path = new URL(page.url()).pathname;
    expect(path).toMatch(/^\/r\/[A-Za-z0-9_-]{22}$/);
    await checkPage(page, 'receipt', PHONE.width, { height: PHONE.height, dir: SHOTS, file: '1-receipt' });
    expect(await axeViolations(page)).toEqual([]);
    const main = await page.locator('main').innerText();
    expect(main).toContain(s.reference_id);
    expect(main).toContain('Your selfie matched the NIMC photo');
    expect(main).toContain('https://ndpc.gov.ng');
    for (const value of personal) expect((await page.content()).toLowerCase()).not.toContain(value.toLowerCase());

    // The PDF, read back as text; and the photo's bytes are not in it.
    const pdf = await page.request.get(`${stack.url}${path}.pdf`);
    expect(pdf.status()).toBe(200);
    expect(pdf.headers()['content-type']).toBe('application/pdf');
    const bytes = await pdf.body();
    expect(bytes.includes(photo)).toBe(false);
    const file = join(dir, 'receipt.pdf');
    writeFileSync(file, bytes);
    const text = (await run('pdftotext', [file, '-'])).stdout;
    expect(text).toContain('Your consent receipt');
    expect(text).toContain(s.reference_id);
    expect(text).toContain('Withdraw your consent');
    for (const value of personal) expect(text.toLowerCase()).not.toContain(value.toLowerCase());

    // The JSON: every field, the face result, no one named.
    const json = await page.request.get(`${stack.url}${path}.json`);
    const raw = await json.text();
    const doc = JSON.parse(raw) as Record<string, any>;
    for (const f of FIELDS_27560) expect(Object.hasOwn(doc, f), f).toBe(true);
    expect(doc.results).toMatchObject({ verification: 'found', face: { status: 'compared', match: true }, liveness: 'not_checked' });
    expect(doc.pii_information.map((p: { pii_type: string }) => p.pii_type)).toContain('Your selfie');
    for (const value of personal) expect(raw.toLowerCase()).not.toContain(value.toLowerCase());

    // E-mailed to the address typed; the page says it was sent.
    const before = smtp.messages.length;
    await page.getByLabel('Your e-mail address').fill('grace@example.org');
    await page.getByRole('button', { name: 'Send me the receipt' }).click();
    await page.getByRole('status').filter({ hasText: 'Sent.' }).waitFor();
    await checkPage(page, 'receipt sent', PHONE.width, { height: PHONE.height, dir: SHOTS, file: '2-sent' });
    expect(await axeViolations(page)).toEqual([]);
    const [mail] = (await smtp.waitFor(before + 1)).slice(before);
    expect(mail!.to).toEqual(['grace@example.org']);
    await page.context().close();
  });
});
