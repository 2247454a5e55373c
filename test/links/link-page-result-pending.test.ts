import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';
import { makeLink, openPage, ownAddress, sandboxVnin, submitPage } from '../setup/links.ts';

/**
 * The page's result when NIMC has not answered by the time the page stops waiting: "not decided yet"
 * (verdict null), with the reference and what happens next, never the old "try again" that invited
 * a second, charged, verification. The authority answers after 1.2 s; the page waits 400 ms.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ simLatencyMs: 1200, env: { VERIFY_WAIT_MS: '400' } });
}, 60_000);
afterAll(async () => stack?.close());

describe('the link page while the verification is still running', () => {
  it('When NIMC has not answered when the page stops waiting, then 200 "Not decided yet" with no verdict, the reference and what happens next; the submission stays pending and the requery gives the verdict once NIMC answers', { timeout: 60_000 }, async () => {
    const org = await stack.createOrg({ units: 5 });
    const link = await makeLink(stack, org.admin.token, { require_face: false });
    const csrf = (await openPage(stack, link.url)).csrf!;
    const sent = await submitPage(stack, link.url, { csrf, vnin: await sandboxVnin(stack, '70000000001') }, { from: ownAddress() });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body).toEqual({
      verdict: null,
      heading: 'Not decided yet',
      detail: expect.stringMatching(/^NIMC has not answered yet\. Your check goes on without this page, and .+ will receive the result when it comes\.$/),
      next: expect.stringMatching(/^What happens next: do not send again; .+ will tell you the result\. You can close this page\.$/),
      reference_id: expect.stringMatching(/^REF-[A-Z0-9]{12}$/),
      reference: expect.stringMatching(/^Your reference: REF-[A-Z0-9]{12}\. /),
      receipt: expect.stringMatching(/^\/r\/[A-Za-z0-9_-]{22}$/),
    });
    const ref = (sent.body as { reference_id?: string }).reference_id!;
    // The person's receipt exists already, and says the check is not decided yet.
    const receipt = (sent.body as { receipt?: string }).receipt!;
    const early = (await (await fetch(`${stack.url}${receipt}.json`)).json()) as { record_id: string; results: Record<string, unknown> };
    expect(early.record_id).toBe(ref);
    expect(early.results).toMatchObject({ verification: 'pending', verdict: null, verdict_reasons: [] });
    const detail = await stack.api('GET', `/v1/verification-links/${link.id}`, { token: org.admin.token });
    expect(detail.body.submissions).toMatchObject([{ reference_id: ref, status: 'pending', verdict: null, verdict_reasons: [] }]);
    // The requery says the same until the lookup ends, then the verdict.
    const found = await waitFor(async () => {
      const r = await stack.api('POST', '/v1/verify-nin/requery', { token: org.admin.token, json: { reference_id: ref } });
      return r.status === 200 ? r : null;
    }, { what: `the verification ${ref} found`, timeoutMs: 20_000 });
    expect(found.body).toMatchObject({ verdict: 'verified', verdict_reasons: [] });
    // The same receipt now reads the end, with the organisation's verdict.
    const late = (await (await fetch(`${stack.url}${receipt}.json`)).json()) as { results: Record<string, unknown> };
    expect(late.results).toMatchObject({ verification: 'found', verdict: 'verified', verdict_reasons: [] });
  });
});
