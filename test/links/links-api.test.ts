import { execFile } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { csrfKeys, issueCsrf } from '../../src/modules/links/page/csrf.ts';
import { createUser } from '../../src/modules/organisations/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { FACES, HOPPER_NIN, linkReceiver, makeLink, openPage, ownAddress, pathOf, sandboxVnin, submitPage } from '../setup/links.ts';
import { waitFor } from '../setup/wait.ts';

/**
 * Verification links over HTTP: the API an administrator uses, and the person's page as its
 * script calls it (the browser walk is test/links/link-page-browser.test.ts). A face worker runs, the identity
 * simulator answers Grace Hopper's portrait for her NIN, and the sandbox receiver takes the webhooks.
 */
const hopperSelfie = `data:image/jpeg;base64,${readFileSync(`${FACES}grace-hopper.selfie.jpg`).toString('base64')}`;
const FIXTURE_VNIN = 'AA000000000001ZZ';
const FIXTURE_VNIN_NOT_FOUND = 'AA000000000009ZZ';
const PER_LINK = 20;
const PER_ADDRESS = 5;

let stack: Stack;
const count = (q: ReturnType<typeof sql.unsafe>) => stack.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*)::int AS n FROM (${q}) x`);
const ledger = (orgId: number) =>
  stack.db.any(sql.type(z.object({ kind: z.string(), units_delta: z.coerce.number(), reference: z.string().nullable() }))`
    SELECT kind, units_delta, reference FROM wallet_transactions WHERE org_id = ${orgId} AND kind <> 'adjustment' ORDER BY id`);
const detail = async (org: OrgFixture, id: string) => {
  const r = await stack.api('GET', `/v1/verification-links/${id}`, { token: org.admin.token });
  expect(r.status, r.text).toBe(200);
  return r.body;
};

beforeAll(async () => {
  // Behind a proxy on the loopback: each test speaks from addresses of its own (X-Forwarded-For), so
  // the per-address limit of one test never meets another's.
  stack = await startStack({ face: true, env: { TRUST_PROXY: 'loopback', LINK_SUBMISSIONS_PER_LINK: String(PER_LINK), LINK_SUBMISSIONS_PER_ADDRESS: String(PER_ADDRESS) } });
  const warm = await stack.createOrg();
  await stack.api('POST', '/v1/verify-nin', { token: warm.member.token, json: { nin: '12345678901', reason: 'corporate' } });
}, 90_000);
afterAll(async () => stack?.close());

describe('links over the API', () => {
  it('When an administrator makes a link, then 201 with an LNK id, its URL once, the defaults (72 h, one use, a selfie), and the list and the link itself show it without the URL', async () => {
    const org = await stack.createOrg();
    const before = Date.now();
    const made = await makeLink(stack, org.admin.token, { client_ref: 'applicant-8812' });
    expect(made).toMatchObject({ id: expect.stringMatching(/^LNK-[A-Z0-9]{12}$/), status: 'active', uses: 0, max_uses: 1, require_face: true, client_ref: 'applicant-8812', reason: 'corporate', purpose: 'Opening your savings account', revoked_at: null });
    expect(made.url).toMatch(new RegExp(`^${stack.url}/v/[A-Za-z0-9_-]{22}$`));
    const hours = (Date.parse(made.expires_at) - before) / 3_600_000;
    expect(hours).toBeGreaterThan(71.9);
    expect(hours).toBeLessThan(72.1);
    // Only the token's hash is kept.
    const token = pathOf(made.url).split('/')[2]!;
    expect(await count(sql.unsafe`SELECT 1 FROM verification_links WHERE token_hash = sha256(convert_to(${token}, 'UTF8')) AND id = ${made.id}`)).toBe(1);
    expect(await count(sql.unsafe`SELECT 1 FROM verification_links WHERE position(${token} in encode(token_hash, 'escape')) > 0`)).toBe(0);

    const second = await makeLink(stack, org.admin.token, { require_face: false, max_uses: 3, expires_in_hours: 1 });
    const page1 = await stack.api('GET', '/v1/verification-links?limit=1', { token: org.admin.token });
    expect(page1.status).toBe(200);
    expect(page1.body.data.map((l: { id: string }) => l.id)).toEqual([second.id]);
    expect(page1.body.data[0].url).toBeUndefined();
    const page2 = await stack.api('GET', `/v1/verification-links?limit=1&cursor=${page1.body.next_cursor}`, { token: org.admin.token });
    expect(page2.body).toEqual({ data: [expect.objectContaining({ id: made.id, status: 'active' })], next_cursor: null });
    expect(await detail(org, made.id)).toMatchObject({ id: made.id, submissions: [] });
    // Another organisation sees none of it.
    const other = await stack.createOrg();
    expect((await stack.api('GET', `/v1/verification-links/${made.id}`, { token: other.admin.token })).status).toBe(404);
    expect((await stack.api('POST', `/v1/verification-links/${made.id}/revoke`, { token: other.admin.token })).status).toBe(404);
    expect((await stack.api('GET', '/v1/verification-links', { token: other.admin.token })).body.data).toEqual([]);
  });

  it('When a field breaks a rule, then 400 with a detail naming it; a missing or mistyped field is 422; nothing is made', async () => {
    const org = await stack.createOrg();
    const post = (json: Record<string, unknown>) => stack.api('POST', '/v1/verification-links', { token: org.admin.token, json });
    const base = { reason: 'corporate', purpose: 'Account opening' };
    const cases: [Record<string, unknown>, number, RegExp][] = [
      [{ ...base, purpose: 'x'.repeat(201) }, 400, /^purpose: purpose must be at most 200 characters$/],
      [{ ...base, purpose: '   ' }, 400, /^purpose: purpose must not be empty$/],
      [{ ...base, expires_in_hours: 0 }, 400, /^expires_in_hours: expires_in_hours must be a whole number from 1 to 720$/],
      [{ ...base, expires_in_hours: 721 }, 400, /^expires_in_hours: /],
      [{ ...base, expires_in_hours: 1.5 }, 422, /^Invalid type for expires_in_hours/],
      [{ ...base, max_uses: 0 }, 400, /^max_uses: max_uses must be a whole number from 1 to 1000$/],
      [{ ...base, max_uses: 1001 }, 400, /^max_uses: /],
      [{ ...base, client_ref: 'r'.repeat(101) }, 400, /^client_ref: /],
      [{ ...base, reason: 'gossip' }, 400, /^Invalid reason: use a key from GET \/v1\/nimc-reasons$/],
      [{ purpose: 'Account opening' }, 422, /^Field required: reason$/],
      [{ reason: 'corporate' }, 422, /^Field required: purpose$/],
      [{ ...base, require_face: 'yes' }, 422, /^Invalid type for require_face/],
      [{ ...base, max_uses: '3' }, 422, /^Invalid type for max_uses/],
    ];
    for (const [json, status, words] of cases) {
      const r = await post(json);
      expect(r.status, JSON.stringify(json)).toBe(status);
      expect(r.body.detail, JSON.stringify(json)).toMatch(words);
    }
    expect((await stack.api('POST', '/v1/verification-links', { token: org.admin.token, raw: 'reason=corporate', contentType: 'application/x-www-form-urlencoded' })).status).toBe(415);
    expect(await count(sql.unsafe`SELECT 1 FROM verification_links WHERE org_id = ${org.orgId}`)).toBe(0);
  });

  it('When a member, an API client without the links scope or a finance officer asks, then 403; an administrator client with the scope makes links; a member client cannot hold it', async () => {
    const org = await stack.createOrg();
    const asMember = await stack.api('POST', '/v1/verification-links', { token: org.member.token, json: { reason: 'corporate', purpose: 'x' } });
    expect(asMember.status).toBe(403);
    expect((await stack.api('GET', '/v1/verification-links', { token: org.member.token })).status).toBe(403);
    const clientToken = async (scopes: string[]) => {
      const c = await stack.api('POST', '/v1/api-clients', { token: org.admin.token, json: { name: `c-${scopes.join('-')}`, role: 'org_admin', scopes } });
      expect(c.status, c.text).toBe(201);
      const t = await stack.api('POST', '/v1/login', { form: { grant_type: 'client_credentials', client_id: c.body.client_id, client_secret: c.body.client_secret } });
      return t.body.access_token as string;
    };
    const without = await stack.api('GET', '/v1/verification-links', { token: await clientToken(['verify']) });
    expect(without.status).toBe(403);
    expect(without.body).toEqual({ detail: 'This API client lacks the scope links', code: 'insufficient_scope' });
    const withScope = await clientToken(['links']);
    const made = await makeLink(stack, withScope);
    expect((await stack.api('POST', `/v1/verification-links/${made.id}/revoke`, { token: withScope })).status).toBe(200);
    const memberClient = await stack.api('POST', '/v1/api-clients', { token: org.admin.token, json: { name: 'm', role: 'member', scopes: ['links'] } });
    expect(memberClient.status).toBe(400);
    expect(memberClient.body.detail).toBe('scopes: the scope links is beyond the member role');
    const finance = { username: `i33-finance-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
    await createUser(stack.db, { orgId: org.orgId, ...finance, role: 'finance', requirePasswordChange: false });
    const financeToken = await stack.login(finance.username, finance.password);
    expect((await stack.api('GET', '/v1/verification-links', { token: financeToken })).status).toBe(403);
  });
});

describe("the person's page", () => {
  it('When the page is opened, then 200: who asks, why, the reason\'s label, the consent, the USSD string for our enterprise code; not indexable, not cached, under a strict CSP whose nonce is the script\'s, under 60 KB compressed', async () => {
    const org = await stack.createOrg();
    const made = await makeLink(stack, org.admin.token, { purpose: 'Opening <your> savings account' });
    const page = await openPage(stack, made.url);
    expect(page.status).toBe(200);
    const name = (await stack.db.oneFirst(sql.type(z.object({ name: z.string() }))`SELECT name FROM organisations WHERE id = ${org.orgId}`));
    expect(page.html).toContain(`${name} asks you to verify your identity`);
    expect(page.html).toContain('Why: Opening &lt;your&gt; savings account');
    expect(page.html).toContain('Lawful reason given: Corporate');
    expect(page.html).toContain('*346*3*&lt;NIN&gt;*000000#');
    expect(page.html).toContain('capture="user"');
    expect(page.html).toContain('<meta name="robots" content="noindex, nofollow">');
    expect(page.headers.get('x-robots-tag')).toBe('noindex, nofollow');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const csp = page.headers.get('content-security-policy')!;
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(page.html).toMatch(new RegExp(`<script src="/v/assets/link-[0-9a-f]{12}\\.js" nonce="${nonce!.replace(/[+/]/g, (c) => `\\${c}`)}" defer>`));
    // Every script of the page is ours: the one file, and the data block (not run).
    expect([...page.html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]).every((t) => t.includes(`nonce="${nonce}"`) || t.includes('type="application/json"'))).toBe(true);
    expect(page.html).not.toMatch(/\sstyle=|\son[a-z]+=/);
    // Another load, another nonce and another CSRF token.
    const again = await openPage(stack, made.url);
    expect(again.headers.get('content-security-policy')).not.toBe(csp);
    expect(again.csrf).not.toBe(page.csrf);

    // The first load, compressed as a phone's browser asks for it.
    let bytes = 0;
    const files = [pathOf(made.url), ...[...page.html.matchAll(/(?:href|src)="(\/v\/assets\/[^"]+)"/g)].map((m) => m[1]!)];
    expect(files).toHaveLength(3);
    for (const f of files) {
      const r = await fetch(`${stack.url}${f}`, { headers: { 'accept-encoding': 'br, gzip' } });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-encoding')).toBe('br');
      bytes += Number(r.headers.get('content-length'));
      await r.arrayBuffer();
    }
    console.log(`the page's first load is ${bytes} bytes compressed (goal <= 61440)`);
    expect(bytes).toBeLessThanOrEqual(60 * 1024);
  });

  it('When the token is unknown or malformed, then 404 and a sentence; when the link expired or was revoked, then 410 saying so and nothing else, and submissions are refused 410', async () => {
    const org = await stack.createOrg();
    for (const bad of ['/v/AAAAAAAAAAAAAAAAAAAAAA', '/v/short', '/v/..%2f..%2fetc']) {
      const r = await fetch(`${stack.url}${bad}`);
      expect(r.status, bad).toBe(404);
      expect(await r.text()).toContain('This verification link is not valid');
    }
    const expired = await makeLink(stack, org.admin.token);
    await stack.db.query(sql.unsafe`UPDATE verification_links SET expires_at = now() - interval '1 minute', created_at = now() - interval '2 hours' WHERE id = ${expired.id}`);
    const revoked = await makeLink(stack, org.admin.token);
    const csrf = (await openPage(stack, revoked.url)).csrf;
    const r = await stack.api('POST', `/v1/verification-links/${revoked.id}/revoke`, { token: org.admin.token });
    expect(r.body).toMatchObject({ id: revoked.id, status: 'revoked', revoked_at: expect.any(String) });
    // Revoking again changes nothing: 409 (test/links/link-maker-authority.test.ts).
    expect((await stack.api('POST', `/v1/verification-links/${revoked.id}/revoke`, { token: org.admin.token })).status).toBe(409);
    for (const [link, words] of [[expired, 'This verification link has expired.'], [revoked, 'This verification link was withdrawn.']] as const) {
      const page = await openPage(stack, link.url);
      expect(page.status).toBe(410);
      expect(page.html).toContain(words);
      expect(page.html).not.toContain('Opening your savings account');
      expect(page.html).not.toContain('<script');
      const sent = await submitPage(stack, link.url, { csrf: csrf ?? '', vnin: FIXTURE_VNIN, selfie: hopperSelfie }, { from: ownAddress() });
      expect(sent.status).toBe(410);
      expect(sent.body).toMatchObject({ detail: words, step: 'result' });
    }
    expect((await detail(org, expired.id)).status).toBe('expired');
    expect(await count(sql.unsafe`SELECT 1 FROM verifications WHERE org_id = ${org.orgId}`)).toBe(0);
  });

  it('When a submission lacks the CSRF token, carries another link\'s or an old one, or comes from another site, then 403 and nothing is looked up or counted', async () => {
    const org = await stack.createOrg({ units: 5 });
    const link = await makeLink(stack, org.admin.token, { require_face: false });
    const other = await makeLink(stack, org.admin.token, { require_face: false });
    const theirs = (await openPage(stack, other.url)).csrf!;
    const ours = (await openPage(stack, link.url)).csrf!;
    const old = issueCsrf(csrfKeys(stack.config.jwtSecrets), link.id, new Date(Date.now() - 3 * 3600_000));
    const forged = `${ours.split('.').slice(0, 2).join('.')}.${createHmac('sha256', 'not our key').update('x').digest('base64url')}`;
    const attempts: [Record<string, unknown>, Record<string, string>][] = [
      [{}, {}],
      [{ csrf: theirs }, {}],
      [{ csrf: old }, {}],
      [{ csrf: forged }, {}],
      [{ csrf: ours }, { 'sec-fetch-site': 'cross-site' }],
      [{ csrf: ours }, { origin: 'https://evil.example' }],
    ];
    for (const [extra, headers] of attempts) {
      const r = await submitPage(stack, link.url, { vnin: FIXTURE_VNIN, ...extra }, { from: ownAddress(), headers });
      expect(r.status, JSON.stringify([extra, headers])).toBe(403);
    }
    const plain = await submitPage(stack, link.url, { vnin: FIXTURE_VNIN }, { from: ownAddress() });
    expect(plain.body).toEqual({ detail: 'This page is out of date. Reload it and try again.', code: 'csrf', step: 'send' });
    expect(await count(sql.unsafe`SELECT 1 FROM verifications WHERE org_id = ${org.orgId}`)).toBe(0);
    expect((await detail(org, link.id)).uses).toBe(0);
    // The same token, from the page's own origin, goes through.
    const ok = await submitPage(stack, link.url, { vnin: FIXTURE_VNIN, csrf: ours }, { from: ownAddress(), headers: { 'sec-fetch-site': 'same-origin', origin: stack.url } });
    expect(ok.status, ok.text).toBe(200);
  });

  it('When 20 submissions of a 5-use link arrive at once, then exactly 5 verifications are made and the other 15 are told it is used up (410)', { timeout: 60_000 }, async () => {
    const org = await stack.createOrg();
    const link = await makeLink(stack, org.admin.token, { require_face: false, max_uses: 5 });
    const csrf = (await openPage(stack, link.url)).csrf!;
    const answers = await Promise.all(Array.from({ length: 20 }, () => submitPage(stack, link.url, { csrf, vnin: FIXTURE_VNIN }, { from: ownAddress() })));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(5);
    const refused = answers.filter((a) => a.status !== 200);
    expect(refused.map((a) => [a.status, a.body.code]), JSON.stringify(refused.map((a) => a.body))).toEqual(Array.from({ length: 15 }, () => [410, 'used_up']));
    const d = await detail(org, link.id);
    expect(d).toMatchObject({ uses: 5, max_uses: 5, status: 'used_up' });
    expect(d.submissions).toHaveLength(5);
    expect(await count(sql.unsafe`SELECT 1 FROM verifications WHERE org_id = ${org.orgId}`)).toBe(5);
    expect((await openPage(stack, link.url)).status).toBe(410);
  });

  it('When one address or one link sends more than its limit, then 429 in the person\'s words with Retry-After, before anything is looked up', async () => {
    const org = await stack.createOrg();
    const a = await makeLink(stack, org.admin.token, { require_face: false, max_uses: 3 });
    const csrfA = (await openPage(stack, a.url)).csrf!;
    const from = ownAddress();
    // A vNIN the authority does not know is refused, charges nothing and gives its use back: only the limits stop these.
    for (let i = 0; i < PER_ADDRESS; i++) expect((await submitPage(stack, a.url, { csrf: csrfA, vnin: FIXTURE_VNIN_NOT_FOUND }, { from })).status).toBe(404);
    const limited = await submitPage(stack, a.url, { csrf: csrfA, vnin: FIXTURE_VNIN }, { from });
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ code: 'rate_limited', step: 'send', detail: expect.stringMatching(/^Too many tries\. Wait (a minute|([2-9]|\d{2,}) minutes), then try again\.$/) });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await submitPage(stack, a.url, { csrf: csrfA, vnin: FIXTURE_VNIN }, { from: ownAddress() })).status).toBe(200);

    const b = await makeLink(stack, org.admin.token, { require_face: false });
    const csrfB = (await openPage(stack, b.url)).csrf!;
    for (let i = 0; i < PER_LINK; i++) expect((await submitPage(stack, b.url, { csrf: csrfB, vnin: FIXTURE_VNIN_NOT_FOUND }, { from: ownAddress() })).status).toBe(404);
    expect((await submitPage(stack, b.url, { csrf: csrfB, vnin: FIXTURE_VNIN }, { from: ownAddress() })).status).toBe(429);
    expect((await detail(org, b.id)).uses).toBe(0);
  });

  it('When a person sends a vNIN and their selfie, then it runs as a face match (2 units), the link shows the submission with its face result, the webhook is delivered, and the consent stored is the person\'s own', { timeout: 60_000 }, async () => {
    const org = await stack.createOrg({ units: 5 });
    const hooks = await linkReceiver(stack, org);
    const link = await makeLink(stack, org.admin.token, { client_ref: 'applicant-77', purpose: 'Opening your current account' });
    const csrf = (await openPage(stack, link.url)).csrf!;
    const vnin = await sandboxVnin(stack, HOPPER_NIN);
    const from = ownAddress();
    const ua = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) Mobile Safari/537.36';
    const sent = await submitPage(stack, link.url, { csrf, vnin, selfie: hopperSelfie }, { from, headers: { 'user-agent': ua } });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body).toEqual({
      verdict: 'verified',
      heading: 'You are verified',
      detail: expect.stringMatching(/^NIMC confirmed your identity and your selfie matched the photo NIMC holds\. .+ has the result\.$/),
      next: expect.stringMatching(/^What happens next: .+ will tell you the next step\. You can close this page\.$/),
      reference_id: expect.stringMatching(/^REF-[A-Z0-9]{12}$/),
      reference: expect.stringMatching(/^Your reference: REF-[A-Z0-9]{12}\. Quote it if you contact .+\.$/),
      receipt: expect.stringMatching(/^\/r\/[A-Za-z0-9_-]{22}$/),
    });
    // The page never shows the record (its reference only, to quote).
    expect(sent.text).not.toMatch(/Grace|Hopper|70000000001/);

    const d = await detail(org, link.id);
    expect(d).toMatchObject({ uses: 1, status: 'used_up' });
    expect(d.submissions).toEqual([{ reference_id: expect.stringMatching(/^REF-/), status: 'found', code: null, face: expect.objectContaining({ status: 'compared', match: true, liveness: 'not_checked' }), verdict: 'verified', verdict_reasons: [], submitted_at: expect.any(String) }]);
    const ref = d.submissions[0].reference_id;
    expect(await ledger(org.orgId)).toEqual([
      { kind: 'verification', units_delta: -1, reference: ref },
      { kind: 'face_match', units_delta: -1, reference: ref },
    ]);

    const { hook, event } = await hooks.eventFor(ref);
    expect(event).toMatchObject({ type: 'verification_link.submitted', data: { link_id: link.id, client_ref: 'applicant-77', reference_id: ref, status: 'found', verdict: 'verified', verdict_reasons: [] } });
    expect(event.data.face).toEqual({ status: 'compared', match: true, confidence: expect.any(Number), liveness: 'not_checked' });
    expect((sent.body as { reference_id?: string }).reference_id).toBe(ref);
    const [t, v1] = hook.headers['idverify-signature']!.split(',').map((p) => p.split('=')[1]!);
    expect(createHmac('sha256', hooks.secret).update(`${t}.${hook.body}`).digest('hex')).toBe(v1);
    expect(hook.body).not.toMatch(/Grace|Hopper|70000000001/);

    // The requery reads the record, and the consent is the person's: when, from where, with what, and the words.
    const requery = await stack.api('POST', '/v1/verify-nin/requery', { token: org.admin.token, json: { reference_id: ref } });
    expect(requery.status).toBe(200);
    expect(requery.body.data.fname).toBe('Grace');
    const name = await stack.db.oneFirst(sql.type(z.object({ name: z.string() }))`SELECT name FROM organisations WHERE id = ${org.orgId}`);
    expect(requery.body.consent).toEqual({
      obtained_at: expect.any(String),
      channel: 'web',
      notice_version: expect.stringMatching(/^verification-link-en-[0-9a-f]{10}$/),
      given_by: 'person',
      address: from,
      user_agent: ua,
      text: expect.stringContaining(`I agree that ${name} may check my identity`),
    });
    expect(requery.body.consent.text).toContain('for this purpose: Opening your current account');
    expect(requery.body.consent.text).toContain('compare my selfie with the photo NIMC holds');
    const history = await stack.api('GET', '/v1/verifications?kind=face', { token: org.admin.token });
    expect(history.body.data.find((v: { reference_id: string }) => v.reference_id === ref).consent).toMatchObject({ given_by: 'person', address: from, user_agent: ua });
  });

  it('When the vNIN was already used, then 404 asking for a new one at the vNIN step; the submission is listed refused, its webhook says so, nothing is charged and the use comes back', { timeout: 60_000 }, async () => {
    const org = await stack.createOrg({ units: 5 });
    const hooks = await linkReceiver(stack, org);
    const vnin = await sandboxVnin(stack, HOPPER_NIN);
    const first = await makeLink(stack, org.admin.token, { require_face: false });
    expect((await submitPage(stack, first.url, { csrf: (await openPage(stack, first.url)).csrf, vnin }, { from: ownAddress() })).status).toBe(200);
    const units = (await ledger(org.orgId)).length;

    const link = await makeLink(stack, org.admin.token);
    const again = await submitPage(stack, link.url, { csrf: (await openPage(stack, link.url)).csrf, vnin, selfie: hopperSelfie }, { from: ownAddress() });
    expect(again.status, again.text).toBe(404);
    // A verification was recorded (refused by NIMC): the person still gets its reference and receipt.
    expect(again.body).toEqual({
      detail: 'This vNIN has already been used. Make a new one (dial *346*3*<NIN>*000000#) and enter it here.',
      code: 'vnin_used',
      step: 'vnin',
      reference_id: expect.stringMatching(/^REF-[A-Z0-9]{12}$/),
      reference: expect.stringMatching(/^Your reference: REF-[A-Z0-9]{12}\. Quote it if you contact .+\.$/),
      receipt: expect.stringMatching(/^\/r\/[A-Za-z0-9_-]{22}$/),
    });
    const d = await detail(org, link.id);
    expect((again.body as { reference_id?: string }).reference_id).toBe(d.submissions[0].reference_id);
    expect(d).toMatchObject({ uses: 0, status: 'active', submissions: [{ reference_id: expect.any(String), status: 'refused', code: 'vnin_used', face: null, verdict: 'not_verified', verdict_reasons: ['refused'], submitted_at: expect.any(String) }] });
    expect((await ledger(org.orgId)).length).toBe(units);
    const { event } = await hooks.eventFor(d.submissions[0].reference_id);
    expect(event.data).toEqual({ link_id: link.id, client_ref: null, reference_id: d.submissions[0].reference_id, status: 'refused', face: null, verdict: 'not_verified', verdict_reasons: ['refused'] });
  });

  it('When the fixture vNIN with Grace Hopper\'s portrait and her selfie are sent, then the face is compared and matches, free: an empty wallet, nothing charged', { timeout: 60_000 }, async () => {
    const org = await stack.createOrg({ units: 0 });
    const link = await makeLink(stack, org.admin.token);
    const sent = await submitPage(stack, link.url, { csrf: (await openPage(stack, link.url)).csrf, vnin: 'AA000000000003ZZ', selfie: hopperSelfie }, { from: ownAddress() });
    expect(sent.status, sent.text).toBe(200);
    expect(await detail(org, link.id)).toMatchObject({ uses: 1, submissions: [{ status: 'found', face: { status: 'compared', match: true } }] });
    expect((await ledger(org.orgId)).map((l) => l.units_delta).filter((u) => u !== 0)).toEqual([]);
  });

  it('When the organisation\'s subscription is not active, then the person is told it cannot take verifications (403 at the result step); the link lists a refused submission without a reference, nothing charged, the use back', { timeout: 60_000 }, async () => {
    const org = await stack.createOrg({ units: 5, subscription: false });
    const hooks = await linkReceiver(stack, org);
    const link = await makeLink(stack, org.admin.token, { require_face: false });
    const sent = await submitPage(stack, link.url, { csrf: (await openPage(stack, link.url)).csrf, vnin: await sandboxVnin(stack, HOPPER_NIN) }, { from: ownAddress() });
    expect([sent.status, sent.body.code, sent.body.step]).toEqual([403, 'org_unavailable', 'result']);
    expect(await detail(org, link.id)).toMatchObject({ uses: 0, status: 'active', submissions: [{ reference_id: null, status: 'refused', code: 'organisation_cannot_verify', face: null }] });
    const hook = await waitFor(async () => (await hooks.received()).find((h) => h.body.includes(link.id)), { what: 'the turned-away event' });
    expect((JSON.parse(hook.body) as { data: unknown }).data).toEqual({ link_id: link.id, client_ref: null, reference_id: null, status: 'refused', code: 'organisation_cannot_verify', face: null, verdict: 'not_verified', verdict_reasons: ['refused'] });
  });

  it('When the selfie shows no face, then 422 at the selfie step with what to do; nothing is looked up, recorded or charged, and the use comes back', { timeout: 60_000 }, async () => {
    const org = await stack.createOrg({ units: 5 });
    const link = await makeLink(stack, org.admin.token);
    const grey = (await sharp({ create: { width: 320, height: 320, channels: 3, background: '#8a8a8a' } }).jpeg().toBuffer()).toString('base64');
    const calls = stack.identitySim.stats().calls;
    const r = await submitPage(stack, link.url, { csrf: (await openPage(stack, link.url)).csrf, vnin: await sandboxVnin(stack, HOPPER_NIN), selfie: grey }, { from: ownAddress() });
    expect(r.status).toBe(422);
    expect(r.body).toEqual({ detail: 'We could not find a face in your selfie. Try again in better light, facing the camera.', code: 'selfie_no_face', step: 'selfie' });
    expect(stack.identitySim.stats().calls).toBe(calls);
    expect(await detail(org, link.id)).toMatchObject({ uses: 0, status: 'active', submissions: [] });
    expect(await ledger(org.orgId)).toEqual([]);
    // Without a selfie, or without consent, or with a malformed vNIN: 400 at the step to fix.
    const csrf = (await openPage(stack, link.url)).csrf;
    expect((await submitPage(stack, link.url, { csrf, vnin: FIXTURE_VNIN }, { from: ownAddress() })).body).toMatchObject({ code: 'selfie_missing', step: 'selfie' });
    expect((await submitPage(stack, link.url, { csrf, vnin: FIXTURE_VNIN, selfie: hopperSelfie, consent: false }, { from: ownAddress() })).body).toMatchObject({ code: 'consent_missing', step: 'consent' });
    expect((await submitPage(stack, link.url, { csrf, vnin: 'AB12', selfie: hopperSelfie }, { from: ownAddress() })).body).toMatchObject({ code: 'vnin_format', step: 'vnin' });
  });

  it('When an operator erases the person, then the consent they gave on the page keeps its time and words but no longer where it came from', { timeout: 60_000 }, async () => {
    const org = await stack.createOrg({ units: 2 });
    const nin = `3${randomBytes(5).readUIntBE(0, 5).toString().padStart(10, '0').slice(-10)}`;
    const link = await makeLink(stack, org.admin.token, { require_face: false });
    const sent = await submitPage(stack, link.url, { csrf: (await openPage(stack, link.url)).csrf, vnin: await sandboxVnin(stack, nin) }, { from: ownAddress(), headers: { 'user-agent': 'i33-erasure-test' } });
    expect(sent.status, sent.text).toBe(200);
    const ref = (await detail(org, link.id)).submissions[0].reference_id;
    const env = { ...process.env, DATABASE_URL: stack.config.DATABASE_URL, SUBJECT_HASH_KEY: stack.config.SUBJECT_HASH_KEY, LOG_LEVEL: 'silent' };
    await promisify(execFile)(process.execPath, ['src/cli/admin.ts', 'subject:erase', '--nin', nin, '--confirm'], { env });
    const consent = await stack.db.oneFirst(sql.type(z.object({ consent: z.record(z.string(), z.unknown()) }))`SELECT consent FROM verifications WHERE reference_id = ${ref}`);
    expect(Object.keys(consent).sort()).toEqual(['channel', 'given_by', 'notice_version', 'obtained_at', 'text']);
  });
});
