import { z } from 'zod';
import { sql } from 'slonik';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { checkPage, CHROMIUM, ensurePortalBuilt, hasChromium, launch, signIn, totp, WIDTHS } from './portal-kit.ts';

if (!hasChromium) console.warn(`SKIPPED test/e2e/portal.test.ts: ${CHROMIUM} not found (Debian: apt-get install -y chromium)`);

// The portal in headless Chromium against a real stack: sign-in (first-login change), a top-up paid at
// the simulator's checkout, a verification and its slip, a member kept out of the admin pages, CSRF,
// the session ending with a password change, and axe-core on every page at both widths.

describe.skipIf(!hasChromium)('portal in headless Chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let org: OrgFixture;

  beforeAll(async () => {
    ensurePortalBuilt();
    stack = await startStack();
    org = await stack.createOrg({ units: 25 });
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  const newPage = async (): Promise<Page> => (await browser.newContext({ viewport: { width: WIDTHS.desktop, height: 900 } })).newPage();

  it('When a new user signs in with a temporary password (the operator\'s user:create), then they must choose their own, and land on the overview', async () => {
    const added = await stack.addUser(org.orgId, { role: 'member', username: `newbie-${org.orgId}` });
    const page = await newPage();
    await page.goto(`${stack.url}/portal`);
    await page.getByLabel('Username').fill(added.username);
    await page.getByLabel('Password').fill(added.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('New password').fill('a-brand-new-password-1');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect((await stack.api('POST', '/v1/login', { form: { username: added.username, password: 'a-brand-new-password-1' } })).status).toBe(200);
    await page.context().close();
  });

  it('When a user with two-factor sign-in on signs in, then the portal asks for the one-time code and lets them in with it', async () => {
    const mfaOrg = await stack.createOrg({ units: 0 });
    const enrol = await stack.api('POST', '/v1/me/mfa/totp', { token: mfaOrg.member.token });
    expect(enrol.status).toBe(201);
    const secret = enrol.body.secret as string;
    const confirm = await stack.api('POST', '/v1/me/mfa/totp/confirm', { token: mfaOrg.member.token, json: { code: totp(secret) } });
    expect(confirm.status).toBe(200);
    const page = await newPage();
    await page.goto(`${stack.url}/portal`);
    await page.getByLabel('Username').fill(mfaOrg.member.username);
    await page.getByLabel('Password').fill(mfaOrg.member.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('A one-time code is required').waitFor();
    // The confirming code's step is spent: the next step's code (accepted one step ahead) signs in.
    await page.getByLabel('One-time code').fill(totp(secret, Date.now(), 1));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.context().close();
  });

  // Every page at two widths, each with axe and a full-page screenshot: 26 s alone on a 2-core machine.
  it('When an administrator browses every page, then the navigation offers them all, the balance reads in units, and axe finds nothing serious at 360 and 1,440 px', async () => {
    const page = await newPage();
    await page.goto(`${stack.url}/portal`);
    await checkPage(page, 'sign-in', WIDTHS.phone);
    await signIn(page, stack.url, org.admin.username, org.admin.password);
    const nav = page.getByRole('navigation');
    const names = await nav.getByRole('link').allTextContents();
    expect(names).toEqual(['Overview', 'Top up', 'Verify', 'Batches', 'History', 'Team', 'API clients', 'Webhooks', 'Verification links', 'Audit trail', 'Settings', 'Account']);
    const units = (await stack.api('GET', '/v1/me', { token: org.admin.token })).body.organisation.units as number;
    await expect.poll(() => page.getByTestId('balance').textContent()).toBe(`${units.toLocaleString('en-US')} units`);
    for (const name of names) {
      await nav.getByRole('link', { name }).click();
      await page.getByRole('heading', { level: 1, name }).waitFor();
      const slug = name.toLowerCase().replace(/ /g, '-');
      for (const width of Object.values(WIDTHS)) await checkPage(page, slug, width);
    }
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.context().close();
  }, 90_000);

  it('When an administrator tops up at the processor checkout, then the portal shows the credit by itself', async () => {
    const before = (await stack.api('GET', '/v1/me', { token: org.admin.token })).body.organisation.units as number;
    const page = await newPage();
    await signIn(page, stack.url, org.admin.username, org.admin.password);
    await page.getByRole('link', { name: 'Top up' }).click();
    await page.getByLabel('Units', { exact: true }).fill('500');
    // The price follows the typed units: no button to press.
    await page.getByRole('table').getByText('Total to pay').waitFor();
    await page.getByRole('button', { name: /^Pay ₦/ }).click();
    await page.getByRole('button', { name: 'Pay', exact: true }).click();
    await page.getByRole('link', { name: 'Return to merchant' }).click();
    await page.getByText(/Credited: 500 units/).waitFor({ timeout: 20_000 });
    const me = await stack.api('GET', '/v1/me', { token: org.admin.token });
    expect(me.body.organisation.units).toBe(before + 500);
    await page.context().close();
  });

  it('When a member verifies a NIN, then the person is shown with the photo and the slip is a PDF; the admin pages are neither offered nor served', async () => {
    const page = await newPage();
    await signIn(page, stack.url, org.member.username, org.member.password);
    expect(await page.getByRole('navigation').getByRole('link').allTextContents()).toEqual(['Overview', 'Verify', 'Batches', 'History', 'Account']);
    await page.getByRole('link', { name: 'Verify' }).click();
    await page.getByLabel('NIN').fill('12345678901');
    await page.getByLabel('Reason').selectOption('corporate');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Adaeze Okonkwo' }).waitFor();
    expect(await page.getByRole('img', { name: /Photo of Adaeze/ }).count()).toBe(1);
    const slipHref = await page.getByRole('link', { name: /Print slip/ }).getAttribute('href');
    const slip = await page.evaluate(async (href) => {
      const r = await fetch(href!);
      return { status: r.status, type: r.headers.get('content-type'), head: new TextDecoder().decode((await r.arrayBuffer()).slice(0, 5)) };
    }, slipHref);
    expect(slip).toEqual({ status: 200, type: 'application/pdf', head: '%PDF-' });

    await page.goto(`${stack.url}/portal/team`);
    await page.getByRole('heading', { name: 'Not available' }).waitFor();
    const refused = await page.evaluate(async () => (await fetch('/portal/api/team')).status);
    expect(refused).toBe(403);
    await page.context().close();
  });

  it('When a member uploads a CSV batch, then the portal previews it and follows it to completion, and the results download', async () => {
    const page = await newPage();
    await signIn(page, stack.url, org.member.username, org.member.password);
    await page.getByRole('navigation').getByRole('link', { name: 'Batches' }).click();
    const csv = 'nin,client_ref\n12345678901,a\n12345678902,b\n99999999999,c\n31415926535,d\nnot-a-nin,e\n';
    await page.getByLabel('CSV file').setInputFiles({ name: 'customers.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByText('customers.csv: first 5 of 5 rows; about 1 units if every live row is found').waitFor();
    await page.getByRole('button', { name: 'Upload batch' }).click();
    await page.getByText('This batch has completed.').waitFor({ timeout: 30_000 });
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'rows done' }).textContent()).toContain('5 of 5 rows done: 3 found, 1 not found, 0 failed, 1 invalid');
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download results (CSV)' }).click();
    const file = await (await download).path();
    const { readFileSync } = await import('node:fs');
    const lines = readFileSync(file!, 'utf8').trim().split(/\r?\n/);
    expect(lines[0]).toBe('row,client_ref,status,reference_id,fname,mname,lname,dob,gender,phone,detail');
    expect(lines).toHaveLength(6);
    await page.context().close();
  });

  it('When the organisation requires consent, then a batch uploaded without a statement is refused, and with one it runs and each row keeps it', async () => {
    const strict = await stack.createOrg({ units: 10 });
    expect((await stack.api('PATCH', '/v1/me/organisation', { token: strict.admin.token, json: { require_consent: true } })).status).toBe(200);
    const page = await newPage();
    await signIn(page, stack.url, strict.member.username, strict.member.password);
    await page.getByRole('navigation').getByRole('link', { name: 'Batches' }).click();
    await page.getByText('Consent (required by your organisation)').waitFor();
    const csv = { name: 'consented.csv', mimeType: 'text/csv', buffer: Buffer.from('nin,client_ref\n31415926536,a\n') };
    await page.getByLabel('CSV file').setInputFiles(csv);
    await page.getByRole('button', { name: 'Upload batch' }).click();
    await page.getByText('consent is required by your organisation').waitFor();
    await page.getByLabel('The people in this file agreed to be verified').check();
    // A day ago, as the browser's datetime-local field takes it (local time, minutes).
    const dayAgo = await page.evaluate(() => {
      const d = new Date(Date.now() - 86_400_000);
      const pad = (n: number) => String(n).padStart(2, '0');
      return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
    });
    await page.getByLabel('When they agreed').fill(dayAgo);
    await page.getByLabel('How they agreed').selectOption('in_person');
    await page.getByLabel('Privacy notice version').fill('privacy-2026-11');
    await page.getByRole('button', { name: 'Upload batch' }).click();
    await page.getByText('This batch has completed.').waitFor({ timeout: 30_000 });
    const rows = await stack.db.any(sql.type(z.object({ consent: z.object({ channel: z.string(), notice_version: z.string() }) }))`
      SELECT consent FROM verifications WHERE org_id = ${strict.orgId} AND batch_id IS NOT NULL`);
    expect(rows.map((r) => [r.consent.channel, r.consent.notice_version])).toEqual([['in_person', 'privacy-2026-11']]);
    await page.context().close();
  });

  it('When a change is sent without the CSRF token, or with another session\'s, then it is refused and nothing changes', async () => {
    const page = await newPage();
    await signIn(page, stack.url, org.admin.username, org.admin.password);
    const answers = await page.evaluate(async () => {
      const post = (headers: Record<string, string>) =>
        fetch('/portal/api/team', { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify({ username: 'csrf-victim', email: 'v@example.com', role: 'org_admin' }) });
      const none = await post({});
      const forged = await post({ 'X-CSRF-Token': 'A'.repeat(43) });
      return [none.status, ((await none.json()) as { code?: string }).code, forged.status];
    });
    expect(answers).toEqual([403, 'csrf_failed', 403]);
    const team = await stack.api('GET', '/v1/team', { token: org.admin.token });
    expect(team.body.data.map((u: { username: string }) => u.username)).not.toContain('csrf-victim');
    await page.context().close();
  });

  it('When the user changes their password, then this session and every other one ends at once', async () => {
    const other = await newPage();
    await signIn(other, stack.url, org.member.username, org.member.password);
    const page = await newPage();
    await signIn(page, stack.url, org.member.username, org.member.password);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByLabel('Current password').fill(org.member.password);
    await page.getByLabel('New password').fill('member-changed-password-9');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Your password was changed').waitFor();
    expect(await page.evaluate(async () => (await fetch('/portal/api/me')).status)).toBe(401);
    expect(await other.evaluate(async () => (await fetch('/portal/api/me')).status)).toBe(401);
    await other.getByRole('link', { name: 'History' }).click();
    await other.getByRole('button', { name: 'Sign in' }).waitFor();
    org.member.password = 'member-changed-password-9';
    await page.context().close();
    await other.context().close();
  });

  it('When the session cookie is issued, then it is HttpOnly and SameSite=Strict, and no script or storage holds the token', async () => {
    const page = await newPage();
    await signIn(page, stack.url, org.admin.username, org.admin.password);
    const cookies = await page.context().cookies();
    const session = cookies.find((c) => c.name === 'idv_portal_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/portal' });
    const visible = await page.evaluate<{ cookie: string; local: string; session: string }>('({ cookie: document.cookie, local: JSON.stringify(localStorage), session: JSON.stringify(sessionStorage) })');
    expect(visible).toEqual({ cookie: '', local: '{}', session: '{}' });
    const csp = (await page.request.get(`${stack.url}/portal/history`)).headers()['content-security-policy'];
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe');
    await page.context().close();
  });
});
