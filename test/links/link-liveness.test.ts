import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startStack, type Stack } from '../setup/harness.ts';
import { makeLink, openPage, ownAddress, pathOf, submitPage } from '../setup/links.ts';

/**
 * A link's `liveness` field over the API, and the page's own liveness session route
 * (POST /v/<token>/liveness-session) as its script calls it: CSRF-checked, for the link's
 * organisation, within the organisation's cap of open sessions. The browser walk is
 * test/links/link-page-liveness-browser.test.ts.
 */
const CAP = 3;
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ env: { TRUST_PROXY: 'loopback', LIVENESS_OPEN_SESSIONS_PER_ORG: String(CAP) } });
}, 90_000);
afterAll(async () => stack?.close());

async function sessionFor(url: string, csrf: string | null, from = ownAddress()) {
  const r = await fetch(`${stack.url}${pathOf(url)}/liveness-session`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': from }, body: JSON.stringify({ csrf }) });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

describe('a link with liveness', () => {
  it('When a link asks for a face, then it asks for liveness unless told not to; liveness without a face is 400 with a clear detail; the link shows the field', async () => {
    const org = await stack.createOrg();
    const post = (json: Record<string, unknown>) => stack.api('POST', '/v1/verification-links', { token: org.admin.token, json: { reason: 'corporate', purpose: 'Account opening', ...json } });
    const cases: [Record<string, unknown>, boolean, boolean][] = [
      [{}, true, true],
      [{ require_face: true }, true, true],
      [{ require_face: true, liveness: false }, true, false],
      [{ require_face: false }, false, false],
      [{ require_face: false, liveness: false }, false, false],
    ];
    for (const [json, face, liveness] of cases) {
      const r = await post(json);
      expect(r.status, JSON.stringify(json)).toBe(201);
      expect(r.body, JSON.stringify(json)).toMatchObject({ require_face: face, liveness });
      expect((await stack.api('GET', `/v1/verification-links/${r.body.id}`, { token: org.admin.token })).body, JSON.stringify(json)).toMatchObject({ require_face: face, liveness });
    }
    const refused = await post({ require_face: false, liveness: true });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toBe('liveness: true needs require_face: true (a liveness check comes with the face match); leave liveness out or set require_face');
    expect((await post({ liveness: 'yes' })).status).toBe(422);
    const listed = (await stack.api('GET', '/v1/verification-links', { token: org.admin.token })).body.data as { liveness: boolean }[];
    expect(listed.map((l) => l.liveness)).toEqual([false, false, false, true, true]);
  });

  it('When the page of a liveness link asks for a session with its CSRF token, then 201 with the three poses in a drawn order, for the link\'s organisation; without the token 403; a link without liveness 400; past the organisation\'s cap of open sessions, the wait in the person\'s words', async () => {
    const org = await stack.createOrg();
    const link = await makeLink(stack, org.admin.token, { liveness: true });
    const { csrf, html } = await openPage(stack, link.url);
    // The check's step, with no file input: a chosen photo is not live.
    expect(html).toContain('id="liveness-prompt"');
    expect(html).not.toContain('type="file"');

    expect(await sessionFor(link.url, 'not-a-token')).toMatchObject({ status: 403, body: { code: 'csrf', step: 'send' } });
    const made = await sessionFor(link.url, csrf);
    expect(made.status).toBe(201);
    expect(made.body).toEqual({ session_id: expect.stringMatching(/^lvs_[0-9a-f]{24}$/), challenges: expect.any(Array), expires_at: expect.any(String) });
    expect([...(made.body.challenges as string[])].sort()).toEqual(['look_up', 'turn_left', 'turn_right']);
    const row = await stack.db.one(sql.type(z.object({ org_id: z.coerce.number(), status: z.string() }))`SELECT org_id, status FROM liveness_sessions WHERE id = ${made.body.session_id as string}`);
    expect(row).toEqual({ org_id: org.orgId, status: 'open' });
    // The organisation's own API sees it as its session.
    expect((await stack.api('GET', `/v1/liveness/sessions/${made.body.session_id as string}`, { token: org.member.token })).body).toMatchObject({ status: 'open', challenges: made.body.challenges });

    const selfieLink = await makeLink(stack, org.admin.token);
    const selfiePage = await openPage(stack, selfieLink.url);
    expect(selfiePage.html).toContain('type="file"');
    expect(selfiePage.html).not.toContain('liveness-prompt');
    expect(await sessionFor(selfieLink.url, selfiePage.csrf)).toMatchObject({ status: 400, body: { code: 'liveness_not_asked' } });

    // CAP open sessions at once for the organisation: one made, two more, then a wait.
    for (let i = 1; i < CAP; i++) expect((await sessionFor(link.url, csrf)).status).toBe(201);
    const over = await sessionFor(link.url, csrf);
    expect(over).toMatchObject({ status: 429, body: { code: 'rate_limited', step: 'send', detail: expect.stringMatching(/^Too many tries\. Wait (a minute|\d+ minutes), then try again\.$/) } });
  });

  it('When a liveness link is sent a selfie or nothing in place of the frames, then 400 asking for the check, at the check\'s step, and nothing is taken from the link', async () => {
    const org = await stack.createOrg();
    const link = await makeLink(stack, org.admin.token, { liveness: true });
    const { csrf } = await openPage(stack, link.url);
    for (const extra of [{}, { selfie: 'data:image/jpeg;base64,AAAA' }]) {
      const r = await submitPage(stack, link.url, { csrf, vnin: 'AA000000000001ZZ', ...extra }, { from: ownAddress() });
      expect(r.status, JSON.stringify(extra)).toBe(400);
      expect(r.body).toEqual({ detail: 'Do the check with your camera first.', code: 'liveness_missing', step: 'selfie' });
    }
    expect((await stack.api('GET', `/v1/verification-links/${link.id}`, { token: org.admin.token })).body).toMatchObject({ uses: 0, submissions: [] });
  });
});
