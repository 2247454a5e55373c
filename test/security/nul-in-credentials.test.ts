import { afterAll, beforeAll, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// PostgreSQL text cannot hold a NUL character. A login form carrying one (found by the fuzzer:
// `username=member-xxxx%00`) must be refused as bad input or bad credentials, never a 500.

let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack({ workers: false });
  org = await stack.createOrg();
});
afterAll(async () => stack?.close());

it('When POST /login has a NUL character in the username or password, then 400/401 with {detail}, never 500', async () => {
  const failures: string[] = [];
  for (const [username, password] of [
    [`${org.member.username}\u0000`, org.member.password],
    ['\u0000', 'x'],
    [org.member.username, `${org.member.password}\u0000`],
  ] as const) {
    const r = await stack.api('POST', '/v1/login', { form: { username, password } });
    if (![400, 401, 422].includes(r.status) || typeof r.body?.detail !== 'string') failures.push(`${JSON.stringify(username)} / ${JSON.stringify(password)} -> ${r.status} ${r.text.slice(0, 120)}`);
  }
  expect(failures).toEqual([]);
});
