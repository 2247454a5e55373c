import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../src/api-document/document.ts';
import { startStack, type Stack } from '../setup/harness.ts';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) {
  // Visible in the run's output, not only as a skipped test name.
  console.warn(`SKIPPED test/docs/docs-page.test.ts: ${CHROMIUM} not found (Debian: apt-get install -y chromium)`);
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

describe.skipIf(!hasChromium)(`Documentation page in headless Chromium${hasChromium ? '' : ` (skipped: ${CHROMIUM} not installed)`}`, () => {
  let stack: Stack;
  let browser: Browser;

  beforeAll(async () => {
    stack = await startStack({ workers: false });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('When /docs is opened, then Swagger UI renders every endpoint of the document, with no CSP violation, script error or request outside the service', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    const foreign: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) problems.push(`console ${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('request', (r) => {
      if (!r.url().startsWith(stack.url) && !r.url().startsWith('data:')) foreign.push(r.url());
    });

    const res = await page.goto(`${stack.url}/docs`, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    expect(page.url()).toBe(`${stack.url}/docs/`);
    const csp = (await res!.allHeaders())['content-security-policy'] ?? '';
    expect(csp).toMatch(/script-src 'self'/);
    expect(csp).not.toMatch(/script-src[^;]*'unsafe-inline'/);

    const doc = buildOpenApiDocument();
    const expected = Object.entries(doc.paths ?? {})
      .flatMap(([path, item]) => METHODS.filter((m) => (item as Record<string, unknown>)[m]).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    await page.locator('.opblock').nth(expected.length - 1).waitFor({ timeout: 15_000 });

    const rendered = await page.$$eval('.opblock', (blocks) =>
      blocks.map((b) => {
        const method = b.querySelector('.opblock-summary-method')?.textContent?.trim() ?? '';
        // A deprecated operation's path is drawn struck through, under a class of its own.
        const path = b.querySelector('.opblock-summary-path, .opblock-summary-path__deprecated')?.getAttribute('data-path') ?? '';
        return `${method.toUpperCase()} ${path}`;
      }),
    );
    expect(rendered.sort()).toEqual(expected);
    expect(await page.locator('.info .title').innerText()).toContain(doc.info.title);
    // The introduction (fixture NINs) and the bearer scheme are rendered too.
    expect(await page.locator('.info').innerText()).toContain('12345678901');
    expect(await page.locator('.btn.authorize').count()).toBe(1);

    expect(problems).toEqual([]);
    expect(foreign).toEqual([]);
    await page.close();
  });
});
