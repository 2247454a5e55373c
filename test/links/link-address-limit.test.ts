import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { makeLink, openPage, submitPage } from '../setup/links.ts';

/**
 * The link page's per-address limit counts an IPv6 /64 as one address (one subscriber holds a whole
 * /64) and an IPv4-mapped IPv6 address as its IPv4 address. The stack sits behind a proxy on the
 * loopback (TRUST_PROXY), so each submission names its client address in X-Forwarded-For.
 */
const FIXTURE_VNIN = 'AA000000000001ZZ';
const PER_ADDRESS = 2;

let stack: Stack;
let org: OrgFixture;

beforeAll(async () => {
  stack = await startStack({ env: { TRUST_PROXY: 'loopback', LINK_SUBMISSIONS_PER_ADDRESS: String(PER_ADDRESS), LINK_SUBMISSIONS_PER_LINK: '100' } });
  org = await stack.createOrg({ units: 20 });
});
afterAll(async () => stack?.close());

async function link() {
  const made = await makeLink(stack, org.admin.token, { require_face: false, max_uses: 20 });
  return { url: made.url, csrf: (await openPage(stack, made.url)).csrf! };
}

describe('the link page counts an IPv6 /64 as one address', () => {
  it('When submissions come from different addresses of one IPv6 /64, then they share one count: past the limit 429; another /64 is counted apart', async () => {
    const { url, csrf } = await link();
    const send = (from: string) => submitPage(stack, url, { csrf, vnin: FIXTURE_VNIN }, { from });
    expect((await send('2001:db8:77:1::1')).status).toBe(200);
    expect((await send('2001:db8:77:1::2')).status).toBe(200);
    const third = await send('2001:db8:77:1:ffff:ffff:ffff:fffe');
    expect(third.status).toBe(429);
    expect(third.body).toMatchObject({ code: 'rate_limited', step: 'send' });
    expect((await send('2001:db8:77:2::1')).status).toBe(200);
  });

  it('When an IPv4 address comes mapped into IPv6, then it shares the count of that IPv4 address', async () => {
    const { url, csrf } = await link();
    const send = (from: string) => submitPage(stack, url, { csrf, vnin: FIXTURE_VNIN }, { from });
    expect((await send('203.0.113.9')).status).toBe(200);
    expect((await send('::ffff:203.0.113.9')).status).toBe(200);
    expect((await send('203.0.113.9')).status).toBe(429);
    expect((await send('203.0.113.10')).status).toBe(200);
  });
});
