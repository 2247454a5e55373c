import { afterAll, beforeAll, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// Units far beyond any real top-up (found by the fuzzer): the answer is a 400 naming the problem,
// never a 500, and no top-up row or processor transaction is left behind.

let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack({ workers: false });
  org = await stack.createOrg();
});
afterAll(async () => stack?.close());

it('When POST /topup/initialize asks for more units than fit (2147483700, 1e21, 9007199254740993), then 400 with {detail}, never 500', async () => {
  const failures: string[] = [];
  for (const units of ['2147483700', '2147483600', '99999999900', '1000000000000000000000', '9007199254740993', `1${'0'.repeat(40)}`]) {
    const r = await stack.api('POST', '/v1/topup/initialize', { token: org.admin.token, form: { units } });
    if (r.status !== 400 || typeof r.body?.detail !== 'string') failures.push(`units=${units} -> ${r.status} ${r.text.slice(0, 120)}`);
  }
  expect(failures).toEqual([]);
});
