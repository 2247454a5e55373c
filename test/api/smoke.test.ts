import { afterAll, beforeAll, expect, it } from 'vitest';
import { startStack, type Stack } from '../setup/harness.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ workers: false });
});
afterAll(async () => stack?.close());

it('When an administrator logs in, then /me shows the unit balance', async () => {
  const org = await stack.createOrg({ units: 5 });
  const me = await stack.api('GET', '/v1/me', { token: org.admin.token });
  expect(me.status).toBe(200);
  expect(me.body.organisation.units).toBe(5);
});
