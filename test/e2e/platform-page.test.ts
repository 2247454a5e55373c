import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addLifetimeUnits, createOrganisation, createUser } from '../../src/modules/organisations/index.ts';
import { startStack, type Stack } from '../setup/harness.ts';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) {
  // Visible in the run's output, not only as a skipped test name.
  console.warn(`SKIPPED test/e2e/platform-page.test.ts: ${CHROMIUM} not found (Debian: apt-get install -y chromium)`);
}

// A tenant chooses its name: the page must show it as text, never run it.
const HOSTILE = `Acme <img src=x onerror="document.title='owned'"> & "Sons" <script>document.title='owned'</script>`;

describe.skipIf(!hasChromium)(`Organisations page at /admin/organisations in headless Chromium${hasChromium ? '' : ` (skipped: ${CHROMIUM} not installed)`}`, () => {
  let stack: Stack;
  let browser: Browser;
  const admin = { username: `platform-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
  const orgs: Record<'gold' | 'diamond' | 'hostile', number> = { gold: 0, diamond: 0, hostile: 0 };

  beforeAll(async () => {
    stack = await startStack({ workers: false });
    await createUser(stack.db, { orgId: null, ...admin, role: 'platform_admin' });
    const defaults = { unitCostKobo: stack.config.DEFAULT_UNIT_COST_KOBO, minTopupUnits: stack.config.DEFAULT_MIN_TOPUP_UNITS };
    const docs = { businessRegistration: 'RC-1', dataProtection: 'NDPC-1' };
    orgs.gold = (await createOrganisation(stack.db, { name: 'Gold Self-Hosted Ltd', tenancy: 'self-hosted', ...docs }, defaults)).id;
    orgs.diamond = (await createOrganisation(stack.db, { name: 'Diamond Self-Hosted Ltd', tenancy: 'self-hosted', ...docs }, defaults)).id;
    orgs.hostile = (await createOrganisation(stack.db, { name: HOSTILE, tenancy: 'hosted', ...docs }, defaults)).id;
    await addLifetimeUnits(stack.db, orgs.gold, 31_000);
    await addLifetimeUnits(stack.db, orgs.diamond, 52_500);
    await createUser(stack.db, { orgId: orgs.hostile, username: 'o"brien<b>@example.com', password: 'pw-hostile-1', role: 'org_admin' });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('When a platform administrator signs in with HTTP Basic, then the page lists the organisations with their badges, shows names as text, and breaks no CSP rule', async () => {
    const context = await browser.newContext({ httpCredentials: { username: admin.username, password: admin.password } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) problems.push(`console ${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));

    const res = await page.goto(`${stack.url}/admin/organisations`, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    const headers = await res!.allHeaders();
    expect(headers['cache-control']).toBe('no-store');
    expect(headers['content-security-policy']).toMatch(/script-src 'self'/);
    expect(headers['content-security-policy']).not.toMatch(/script-src[^;]*'unsafe-inline'/);
    expect(await page.locator('h1').innerText()).toBe('Organisations');

    const row = (id: number) => page.locator(`tr[data-org-id="${id}"]`);
    expect(await row(orgs.gold).locator('td.name').innerText()).toBe('Gold Self-Hosted Ltd');
    expect(await row(orgs.gold).locator('.badge').innerText()).toMatch(/^gold$/i);
    expect(await row(orgs.gold).innerText()).toContain('31,000');
    expect(await row(orgs.diamond).locator('.badge').innerText()).toMatch(/^diamond$/i);
    expect(await row(orgs.hostile).locator('.badge').count()).toBe(0);

    // Escaped: the hostile name and username are text, no element of theirs exists, nothing ran.
    expect(await row(orgs.hostile).locator('td.name').innerText()).toBe(HOSTILE);
    expect(await row(orgs.hostile).innerText()).toContain('o"brien<b>@example.com (admin)');
    expect(await page.locator('table img, table script, table b').count()).toBe(0);
    expect(await page.title()).toBe('Organisations - idverify');
    expect(await page.locator('tbody tr').count()).toBe(3);

    expect(problems).toEqual([]);
    await context.close();
  });

  it('When a browser has no credentials or an organisation administrator signs in, then 401 with a Basic prompt or 403', async () => {
    const anonymous = await fetch(`${stack.url}/admin/organisations`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    expect(await anonymous.json()).toEqual({ detail: 'Not authenticated' });

    const basic = (u: string, p: string) => ({ authorization: `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}` });
    const orgAdmin = await fetch(`${stack.url}/admin/organisations`, { headers: basic('o"brien<b>@example.com', 'pw-hostile-1') });
    expect(orgAdmin.status).toBe(403);
    expect(await orgAdmin.json()).toEqual({ detail: 'Only platform administrators may do this' });

    // Scripts may send a platform administrator's bearer token instead.
    const token = await stack.login(admin.username, admin.password);
    const scripted = await fetch(`${stack.url}/admin/organisations?limit=2`, { headers: { authorization: `Bearer ${token}` } });
    expect(scripted.status).toBe(200);
    expect(scripted.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await scripted.text();
    expect(html).toContain('rel="next"');
    expect(html).not.toContain('<img src=x');
  });
});
