import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack({ workers: false });
  org = await stack.createOrg();
});
afterAll(async () => stack?.close());

// RFC 9745: a structured-field date (an integer of seconds since the epoch after "@").
const DEPRECATION = /^@\d+$/;

describe('Versioning', () => {
  it('When an unversioned path with a /v1 twin answers, successfully or not, then it carries Deprecation and a successor-version Link to the twin, and no Sunset', async () => {
    const cases: [string, string, Parameters<Stack['api']>[2], number][] = [
      ['GET', '/me', { token: org.admin.token }, 200],
      ['GET', '/transactions?limit=1&kind=adjustment', { token: org.admin.token }, 200],
      ['GET', '/verifications', { token: org.member.token }, 200],
      ['GET', '/topups', { token: org.member.token }, 403],
      ['GET', '/me', {}, 401],
      ['POST', '/verify-nin', { token: org.admin.token, json: { nin: '123', reason: 'corporate' } }, 400],
      ['GET', '/openapi.json', {}, 200],
    ];
    for (const [method, path, call, status] of cases) {
      const r = await stack.api(method, path, call);
      expect(r.status, `${method} ${path}`).toBe(status);
      expect(r.headers.get('deprecation'), `${method} ${path}`).toMatch(DEPRECATION);
      expect(r.headers.get('link'), `${method} ${path}`).toBe(`</v1${path}>; rel="successor-version"`);
      expect(r.headers.get('sunset')).toBeNull();
    }
    expect(Number((await stack.api('GET', '/me', { token: org.admin.token })).headers.get('deprecation')!.slice(1))).toBe(1767225600);
  });

  it('When the same requests go to /v1, then neither Deprecation nor Link is sent', async () => {
    for (const path of ['/v1/me', '/v1/transactions', '/v1/verifications', '/v1/openapi.json', '/v1/nothing-here']) {
      const r = await stack.api('GET', path, { token: org.admin.token });
      expect(r.headers.get('deprecation'), path).toBeNull();
      expect(r.headers.get('link'), path).toBeNull();
    }
  });

  it('When a path has no /v1 twin (unknown paths, health, metrics, docs), then no Deprecation header', async () => {
    for (const path of ['/nothing-here', '/healthz', '/readyz', '/docs/', '/v2/me']) {
      const r = await stack.api('GET', path);
      expect(r.headers.get('deprecation'), path).toBeNull();
      expect(r.headers.get('link'), path).toBeNull();
    }
  });

  it('When the request target holds characters that could break the header, then the Link stays one well-formed link', async () => {
    const r = await stack.api('GET', '/transactions?kind=%3E%22x', { token: org.admin.token });
    expect(r.status).toBe(400);
    expect(r.headers.get('link')).toBe('</v1/transactions?kind=%3E%22x>; rel="successor-version"');
  });
});
