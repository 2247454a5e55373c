import { afterAll, beforeAll, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

// Every form and JSON string field is refused with 400 when it carries NUL or another C0 control
// character (tab aside), before any query: no error-level log line, whatever the endpoint.

let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack({ workers: false, captureLogs: true });
  org = await stack.createOrg({ units: 5 });
});
afterAll(async () => stack?.close());

const DETAIL = 'must not contain control characters';

it('When a form or JSON string field holds NUL or another C0 control character, then 400 naming the field, and nothing is logged at error level', async () => {
  const cases: [string, string, Parameters<Stack['api']>[2], string][] = [
    ['POST', '/v1/forgot-password', { json: { username: `${org.member.username}\u0000` } }, 'username'],
    ['POST', '/v1/forgot-password', { json: { username: 'someone\u001b[31m' } }, 'username'],
    ['POST', '/v1/login', { form: { username: `${org.member.username}\u0000`, password: org.member.password } }, 'username'],
    ['POST', '/v1/login', { form: { username: org.member.username, password: `${org.member.password}\u0000` } }, 'password'],
    ['POST', '/v1/login', { form: { grant_type: 'client_credentials', client_id: 'cli_\u0000', client_secret: 'x' } }, 'client_id'],
    ['POST', '/v1/reset-password', { json: { token: 'abc\u0000', new_password: 'whatever-password' } }, 'token'],
    ['POST', '/v1/team/invitations', { token: org.admin.token, json: { username: 'new\u0000user', email: 'a@example.com', role: 'member' } }, 'username'],
    ['POST', '/v1/api-clients', { token: org.admin.token, json: { name: 'server\u0007', role: 'member' } }, 'name'],
    ['POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '12345678901', reason: 'corporate\n' } }, 'reason'],
    ['POST', '/v1/topup/initialize', { token: org.admin.token, form: { units: '100\u0000' } }, 'units'],
  ];
  const failures: string[] = [];
  for (const [method, path, call, field] of cases) {
    const r = await stack.api(method, path, call);
    if (r.status !== 400 || r.body?.detail !== `${field}: ${DETAIL}`) failures.push(`${method} ${path} ${field} -> ${r.status} ${r.text.slice(0, 120)}`);
  }
  expect(failures).toEqual([]);
  // Each refusal is logged once its answer is finished: wait for those lines, then read the levels.
  type Line = { level: number; msg?: string; res?: { status: number } };
  const lines = () => stack.logs.map((l) => JSON.parse(l) as Line);
  await waitFor(() => lines().filter((l) => l.res?.status === 400).length >= cases.length, { what: 'the refusals logged' });
  expect(lines().filter((l) => l.res?.status === 400).every((l) => l.level < 50)).toBe(true);
  expect(lines().filter((l) => l.level >= 50)).toEqual([]);
});

it('When a field holds a tab, then the central check lets it through to the field rules', async () => {
  const r = await stack.api('POST', '/v1/forgot-password', { json: { username: `nobody\there` } });
  expect(r.status).toBe(202);
});

it('When a JSON string field or key holds a lone surrogate (a \\ud800 escape), then 400 naming the field, before any query', async () => {
  const consent = { obtained_at: '2026-11-25T09:00:00Z', channel: 'web', notice_version: 'v\ud800' };
  const cases: [string, string, Parameters<Stack['api']>[2], string][] = [
    ['POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '12345678901', reason: 'corporate', consent } }, 'consent.notice_version'],
    ['POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '12345678901', reason: 'corporate\udfff' } }, 'reason'],
    ['POST', '/v1/api-clients', { token: org.admin.token, json: { name: 'server \ud83d', role: 'member' } }, 'name'],
    ['POST', '/v1/forgot-password', { json: { username: 'someone', ['x\udc00']: 1 } }, ''],
  ];
  const failures: string[] = [];
  for (const [method, path, call, field] of cases) {
    const r = await stack.api(method, path, call);
    if (r.status !== 400 || r.body?.detail !== `${field || 'body'}: must be well-formed text (no lone surrogates)`) failures.push(`${method} ${path} ${field} -> ${r.status} ${r.text.slice(0, 120)}`);
  }
  expect(failures).toEqual([]);
  // A well-formed pair (an emoji) is text like any other.
  const ok = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '12345678901', reason: 'corporate', consent: { ...consent, notice_version: 'v3 \ud83d\ude00' } } });
  expect(ok.status).toBe(200);
});
