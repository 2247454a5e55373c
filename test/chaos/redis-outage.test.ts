import { afterAll, beforeAll, expect, it } from 'vitest';
import { startChaosStack, type ChaosStack } from './chaos-stack.ts';
import { outageUnderLoad } from './outage.ts';

let chaos: ChaosStack;
beforeAll(async () => {
  chaos = await startChaosStack({
    proxyRedis: true,
    simLatencyMs: 20,
    captureLogs: true,
    // Shorter than the 4 s cut: a live request already waiting on its job when Redis goes away ends
    // (504, requery later) within the cut, so its client goes on to start requests during the cut.
    env: { RATE_LIMIT_PER_TOKEN: '1000000', RATE_LIMIT_PER_ORG: '1000000', VERIFY_WAIT_MS: '1500' },
  });
});
afterAll(async () => chaos?.close());

it('When Redis is cut off under load, then the API answers 503 in well under a second, and recovers by itself when Redis is back', async () => {
  const org = await chaos.stack.createOrg({ units: 100_000 });
  const { summary } = await outageUnderLoad(chaos, chaos.redisProxy!, { token: org.member.token });
  expect(summary.recoveryMs).toBeLessThan(15_000);
  await chaos.invariants({ settleMs: 120_000 });
});
