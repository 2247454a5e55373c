import { randomBytes } from 'node:crypto';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { makeLink, openPage, submitPage } from '../setup/links.ts';

/**
 * A verification link acts for its maker: it takes submissions only while the administrator (or the
 * unexpired API client) who made it may still make links (read live, as an API client's suspension is), and a revoked link is revoked
 * once.
 */
const FIXTURE_VNIN = 'AA000000000001ZZ';

let stack: Stack;
let org: OrgFixture;

beforeAll(async () => {
  // Behind a proxy on the loopback: each submission speaks from an address of its own, so the
  // per-address limit never counts one test's submissions against another's.
  stack = await startStack({ env: { TRUST_PROXY: 'loopback' } });
  org = await stack.createOrg({ units: 20 });
});
afterAll(async () => stack?.close());

const from = () => `198.51.100.${1 + (randomBytes(1)[0]! % 250)}`;
const patchUser = (id: number, json: unknown) => stack.api('PATCH', `/v1/team/${id}`, { token: org.admin.token, json });
const statusOf = async (id: string) => (await stack.api('GET', `/v1/verification-links/${id}`, { token: org.admin.token })).body.status as string;

/** A second administrator, signed in, who makes a link (no selfie, three uses). */
async function linkOfSecondAdmin() {
  const maker = await stack.addUser(org.orgId, { role: 'org_admin', keepPassword: true });
  const token = await stack.login(maker.username, maker.password);
  const link = await makeLink(stack, token, { require_face: false, max_uses: 3 });
  return { maker, link };
}

/** The page, and a submission from the page as it was opened while the link was live (its CSRF token). */
async function tryLink(url: string, csrf: string) {
  const page = await openPage(stack, url);
  return { page, sent: await submitPage(stack, url, { csrf, vnin: FIXTURE_VNIN }, { from: from() }) };
}

/** What a revoked link's page and submission answer, for comparison. */
async function revokedAnswers() {
  const link = await makeLink(stack, org.admin.token, { require_face: false });
  const csrf = (await openPage(stack, link.url)).csrf!;
  expect((await stack.api('POST', `/v1/verification-links/${link.id}/revoke`, { token: org.admin.token })).status).toBe(200);
  const page = await openPage(stack, link.url);
  return { page, sent: await submitPage(stack, link.url, { csrf, vnin: FIXTURE_VNIN }, { from: from() }) };
}

describe('a verification link acts for its maker', () => {
  it('When the administrator who made a link is disabled, then its page and a submission from a page already open answer 410 as a revoked link does; enabled again, it takes submissions again', async () => {
    const { maker, link } = await linkOfSecondAdmin();
    const csrf = (await openPage(stack, link.url)).csrf!;
    expect((await submitPage(stack, link.url, { csrf, vnin: FIXTURE_VNIN }, { from: from() })).status).toBe(200);

    expect((await patchUser(maker.id, { disabled: true })).status).toBe(200);
    const revoked = await revokedAnswers();
    const gone = await tryLink(link.url, csrf);
    expect(gone.page.status).toBe(410);
    expect(gone.page.html).toContain('This verification link was withdrawn.');
    expect(gone.sent.status).toBe(410);
    expect(gone.sent.body).toEqual(revoked.sent.body);
    expect(await statusOf(link.id)).toBe('suspended');
    expect(await stack.db.oneFirst(sql.type(z.object({ uses: z.coerce.number() }))`SELECT uses FROM verification_links WHERE id = ${link.id}`)).toBe(1);

    // Read live, as an API client's suspension: enabled again, the link (not expired) acts again.
    expect((await patchUser(maker.id, { disabled: false })).status).toBe(200);
    expect(await statusOf(link.id)).toBe('active');
    const back = await tryLink(link.url, csrf);
    expect(back.page.status).toBe(200);
    expect(back.sent.status).toBe(200);
  });

  it('When the administrator who made a link is demoted, then it stops taking submissions (410, as revoked); made an administrator again, it takes them again', async () => {
    const { maker, link } = await linkOfSecondAdmin();
    const csrf = (await openPage(stack, link.url)).csrf!;
    expect((await patchUser(maker.id, { role: 'member' })).status).toBe(200);
    const revoked = await revokedAnswers();
    const gone = await tryLink(link.url, csrf);
    expect(gone.page.status).toBe(410);
    expect(gone.sent.status).toBe(410);
    expect(gone.sent.body).toEqual(revoked.sent.body);
    expect(gone.sent.body).toMatchObject({ code: 'revoked', step: 'result' });
    expect(await statusOf(link.id)).toBe('suspended');

    expect((await patchUser(maker.id, { role: 'org_admin' })).status).toBe(200);
    expect((await tryLink(link.url, csrf)).sent.status).toBe(200);
    expect(await statusOf(link.id)).toBe('active');
  });

  it('When the API client that made a link passes its expires_at, then the link stops taking submissions (410, as revoked) and no use is spent; its expiry moved on, it takes them again', async () => {
    const made = await stack.api('POST', '/v1/api-clients', {
      token: org.admin.token,
      json: { name: `expiring-${randomBytes(3).toString('hex')}`, role: 'org_admin', scopes: ['links'], expires_at: new Date(Date.now() + 3600_000).toISOString() },
    });
    expect(made.status, made.text).toBe(201);
    const signIn = await stack.api('POST', '/v1/login', { form: { grant_type: 'client_credentials', client_id: made.body.client_id, client_secret: made.body.client_secret } });
    expect(signIn.status).toBe(200);
    const link = await makeLink(stack, signIn.body.access_token as string, { require_face: false, max_uses: 3 });
    const csrf = (await openPage(stack, link.url)).csrf!;
    expect((await submitPage(stack, link.url, { csrf, vnin: FIXTURE_VNIN }, { from: from() })).status).toBe(200);

    // The client's expiry passes (moved into the past: the service reads it live, as its sign-in does).
    await stack.db.query(sql.unsafe`UPDATE api_clients SET expires_at = now() - interval '1 second' WHERE client_id = ${made.body.client_id as string}`);
    const revoked = await revokedAnswers();
    const gone = await tryLink(link.url, csrf);
    expect(gone.page.status).toBe(410);
    expect(gone.sent.status).toBe(410);
    expect(gone.sent.body).toEqual(revoked.sent.body);
    expect(await statusOf(link.id)).toBe('suspended');
    expect(await stack.db.oneFirst(sql.type(z.object({ uses: z.coerce.number() }))`SELECT uses FROM verification_links WHERE id = ${link.id}`)).toBe(1);

    await stack.db.query(sql.unsafe`UPDATE api_clients SET expires_at = now() + interval '1 hour' WHERE client_id = ${made.body.client_id as string}`);
    expect((await tryLink(link.url, csrf)).sent.status).toBe(200);
    expect(await statusOf(link.id)).toBe('active');
  });

  it('When a revoked link is revoked again, then 409 with a detail, and the trail holds exactly one revocation', async () => {
    const link = await makeLink(stack, org.admin.token, { require_face: false });
    const first = await stack.api('POST', `/v1/verification-links/${link.id}/revoke`, { token: org.admin.token });
    expect(first.status).toBe(200);
    expect(first.body.status).toBe('revoked');
    const again = await stack.api('POST', `/v1/verification-links/${link.id}/revoke`, { token: org.admin.token });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ detail: 'This verification link is already revoked' });
    const events = await stack.db.oneFirst(
      sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*)::int AS n FROM audit_events WHERE action = 'verification_link.revoked' AND target = ${`verification_link:${link.id}`}`,
    );
    expect(events).toBe(1);
    // An unknown link is still 404.
    expect((await stack.api('POST', '/v1/verification-links/LNK-000000000000/revoke', { token: org.admin.token })).status).toBe(404);
  });
});
