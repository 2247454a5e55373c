import { afterAll, beforeAll, expect, it } from 'vitest';
import { sleep } from '../../bench/lib/proc.ts';
import { liveNin, pool, request, startChaosStack, verifyNin, type ChaosStack } from './chaos-stack.ts';

let chaos: ChaosStack;
beforeAll(async () => {
  chaos = await startChaosStack({
    // Long enough that every kill lands on lookups in flight.
    simLatencyMs: 150,
    workerProcesses: 1,
    // Kept in memory rather than printed: the 504s of requests caught by a kill are expected.
    captureLogs: true,
    env: { RATE_LIMIT_PER_TOKEN: '1000000', RATE_LIMIT_PER_ORG: '1000000', VERIFY_WAIT_MS: '6000', TOPUP_WAIT_MS: '6000' },
  });
});
afterAll(async () => chaos?.close());

it('When the worker process is SIGKILLed and restarted repeatedly under verification and top-up load, then nothing is lost, charged twice or credited twice', async () => {
  const { stack } = chaos;
  const org = await stack.createOrg({ units: 5000 });
  const statuses: number[] = [];
  let stop = false;

  // Top-ups: initialised first; paid during the kills (each payment sends its webhook to the API).
  const references: string[] = [];
  for (let i = 0; i < 30; i++) {
    const r = await stack.api('POST', '/v1/topup/initialize', { token: org.admin.token, form: { units: 100 } });
    expect(r.status).toBe(200);
    references.push(r.body.reference);
  }

  const verifications = (async () => {
    await pool(Array.from({ length: 20 }), 20, async () => {
      for (let i = 0; i < 10_000 && !stop; i++) statuses.push((await verifyNin(stack.url, org.member.token, liveNin(), 30_000)).status);
    });
  })();
  const topups = (async () => {
    for (const [i, ref] of references.entries()) {
      await request(`${stack.paymentSim.url}/__sim/transactions/${ref}/pay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      // Every third one is also confirmed by the administrator's verify call, racing its webhook.
      if (i % 3 === 0) {
        const v = await request(`${stack.url}/v1/topup/verify`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${org.admin.token}` },
          body: `reference=${ref}`,
          timeoutMs: 30_000,
        });
        statuses.push(v.status);
      }
      await sleep(250);
    }
  })();

  const kills: number[] = [];
  for (let k = 0; k < 5; k++) {
    await sleep(1500 + Math.random() * 1000);
    await chaos.killWorkers();
    kills.push(Date.now());
    await sleep(300 + Math.random() * 500);
    await chaos.startWorker({ waitReady: false });
  }
  await topups;
  await sleep(2000);
  stop = true;
  await verifications;

  expect(kills).toHaveLength(5);
  expect(statuses.length).toBeGreaterThan(50);
  // Outcomes a client may see while workers die: success, a 5xx it can requery later, never a 500.
  const unexpected = statuses.filter((s) => ![200, 502, 503, 504].includes(s));
  expect(unexpected).toEqual([]);
  expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);

  // A killed worker's jobs are recovered as stalled once their lock expires (30 s), then settled.
  const report = await chaos.invariants({ settleMs: 150_000 });
  expect(report.stats.credited).toBe(30);
  expect(report.stats.paid).toBe(30);
});
