import { afterAll, beforeAll, expect, it } from 'vitest';
import { liveNin, startChaosStack, verifyNin, type ChaosStack } from './chaos-stack.ts';

let chaos: ChaosStack;
beforeAll(async () => {
  chaos = await startChaosStack({
    simLatencyMs: 20,
    captureLogs: true,
    env: { RATE_LIMIT_PER_TOKEN: '1000000', RATE_LIMIT_PER_ORG: '1000000', VERIFY_WAIT_MS: '30000', DATABASE_POOL_SIZE: '20' },
  });
});
afterAll(async () => chaos?.close());

it('When 2,000 live verifications race for a wallet of 500 units, then exactly 500 succeed, 1,500 get 402 and the balance ends at 0', async () => {
  const { stack } = chaos;
  const org = await stack.createOrg({ units: 500 });
  // One socket per request, all opened at once: the races happen in the service, not in a client pool.
  const statuses = await Promise.all(
    Array.from({ length: 2000 }, async () => {
      const res = await verifyNin(stack.url, org.member.token, liveNin(), 120_000);
      if (res.status === 402) expect(res.body.detail).toBe('Insufficient units in organisation wallet');
      return res.body?.code ? `${res.status}:${res.body.code}` : res.status;
    }),
  );
  const byStatus: Record<string, number> = {};
  for (const s of statuses) byStatus[s] = (byStatus[s] ?? 0) + 1;
  expect(byStatus).toEqual({ 200: 500, 402: 1500 });
  const me = await stack.api('GET', '/v1/me', { token: org.admin.token });
  expect(me.body.organisation.units).toBe(0);
  expect(me.body.organisation.reserved_units).toBe(0);
  const report = await chaos.invariants({ settleMs: 30_000 });
  expect(report.stats.debits).toBe(500);
});
