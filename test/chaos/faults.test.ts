import { sql } from 'slonik';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { signPaystackBody } from '../../src/adapters/payment-processor/signature.ts';
import { sleep } from '../../bench/lib/proc.ts';
import type { OrgFixture } from '../setup/harness.ts';
import { finishedJob, settledCreditJobs, webhookCreditJobId } from '../setup/jobs.ts';
import { waitFor } from '../setup/wait.ts';
import { liveNin, pool, request, startChaosStack, verifyNin, type ChaosStack } from './chaos-stack.ts';

let chaos: ChaosStack;
// Each test has an organisation of its own.
let org: OrgFixture;
beforeAll(async () => {
  chaos = await startChaosStack({
    captureLogs: true,
    env: { RATE_LIMIT_PER_TOKEN: '1000000', RATE_LIMIT_PER_ORG: '1000000', VERIFY_WAIT_MS: '20000', TOPUP_WAIT_MS: '15000' },
  });
});
beforeEach(async () => {
  // The per-organisation in-flight cap (32 by default) raised out of the way: these tests send 56
  // lookups at once to see what upstream faults do, not what admission does.
  org = await chaos.stack.createOrg({ units: 1000, maxInFlight: 100 });
});
afterAll(async () => chaos?.close());

function nin(prefix: string, i: number): string {
  return `${prefix}${String(Date.now() % 1e5).padStart(5, '0')}${String(i).padStart(2, '0')}`.slice(0, 11);
}

describe('upstream faults', () => {
  it('When the identity authority answers 503 twice, always 503, hangs or rate limits, under concurrent load, then only real finds are charged, each once', async () => {
    const { stack } = chaos;
    const before = (await stack.api('GET', '/v1/me', { token: org.admin.token })).body.organisation.units as number;
    const cases = [
      ...Array.from({ length: 8 }, (_, i) => ({ kind: 'flaky-then-ok', nin: nin('5000', i) })),
      ...Array.from({ length: 8 }, (_, i) => ({ kind: 'always-503', nin: nin('5001', i) })),
      ...Array.from({ length: 4 }, (_, i) => ({ kind: 'hangs', nin: nin('5002', i) })),
      ...Array.from({ length: 6 }, (_, i) => ({ kind: 'rate-limited', nin: nin('5003', i) })),
      ...Array.from({ length: 30 }, () => ({ kind: 'normal', nin: liveNin() })),
    ];
    const results = await pool(cases, cases.length, async (c) => ({ ...c, res: await verifyNin(stack.url, org.member.token, c.nin, 60_000) }));
    // Each fault kind has one answer: its status, detail and code (the outcome table of the API reference, tag Verification: src/modules/verification/verification.guide.md).
    const answers = (kind: string) => results.filter((r) => r.kind === kind).map((r) => (r.res.status === 200 ? 200 : { status: r.res.status, detail: r.res.body?.detail, code: r.res.body?.code }));
    const failed = (n: number, status: number, detail: string, code: string) => Array.from({ length: n }, () => ({ status, detail, code }));
    expect(answers('flaky-then-ok')).toEqual(Array(8).fill(200));
    expect(answers('normal')).toEqual(Array(30).fill(200));
    expect(answers('always-503')).toEqual(failed(8, 502, 'Identity authority unavailable, nothing was charged', 'upstream_unavailable'));
    // Every attempt times out (IDENTITY_TIMEOUT_MS 1.5 s, 4 attempts), well inside the 20 s wait.
    expect(answers('hangs')).toEqual(failed(4, 502, 'Identity authority unavailable, nothing was charged', 'upstream_timeout'));
    expect(answers('rate-limited')).toEqual(failed(6, 503, 'Identity authority is rate limiting requests, nothing was charged; retry later', 'upstream_rate_limited'));
    for (const r of results.filter((x) => x.res.status !== 200)) expect(r.res.body.reference_id).toMatch(/^REF-[A-Z0-9]{12}$/);
    const charged = 8 + 30;
    await chaos.invariants({ settleMs: 60_000 });
    const after = (await stack.api('GET', '/v1/me', { token: org.admin.token })).body.organisation.units as number;
    expect(before - after).toBe(charged);
    // A requery of a failed lookup is free and says what happened.
    const failedOne = results.find((r) => r.kind === 'always-503')!;
    const rq = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: failedOne.res.body.reference_id } });
    expect(rq.status).toBe(502);
    expect(rq.body).toEqual({ detail: 'Identity authority unavailable, nothing was charged', reference_id: failedOne.res.body.reference_id, code: 'upstream_unavailable' });
    expect((await stack.api('GET', '/v1/me', { token: org.admin.token })).body.organisation.units).toBe(after);
  });
});

describe('processor faults', () => {
  async function initialize(): Promise<string> {
    const r = await chaos.stack.api('POST', '/v1/topup/initialize', { token: org.admin.token, form: { units: 100 } });
    expect(r.status).toBe(200);
    return r.body.reference;
  }
  const pay = (ref: string, webhook: string) =>
    request(`${chaos.stack.paymentSim.url}/__sim/transactions/${ref}/pay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ webhook }) });
  const verify = (ref: string) => chaos.stack.api('POST', '/v1/topup/verify', { token: org.admin.token, form: { reference: ref } });
  const status = async (ref: string) => (await chaos.stack.db.oneFirst(sql.unsafe`SELECT status FROM topups WHERE reference = ${ref}`)) as string;
  async function waitCredited(ref: string, ms = 20_000): Promise<boolean> {
    for (let i = 0; i < ms / 100; i++) {
      if ((await status(ref)) === 'credited') return true;
      await sleep(100);
    }
    return false;
  }
  async function chargeEvent(ref: string): Promise<string> {
    const v = await request(`${chaos.stack.paymentSim.url}/transaction/verify/${ref}`, { headers: { authorization: `Bearer ${chaos.stack.config.PAYSTACK_SECRET_KEY}` } });
    return JSON.stringify({ event: 'charge.success', data: v.body.data });
  }
  const postWebhook = (body: string, key = chaos.stack.config.PAYSTACK_SECRET_KEY) =>
    request(`${chaos.stack.url}/v1/webhooks/paystack`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-paystack-signature': signPaystackBody(body, key) }, body });

  it('When webhooks come twice, late, out of order, not at all or badly signed, then every paid reference is credited exactly once', async () => {
    const modes = ['normal', 'twice', 'late', 'out-of-order', 'none', 'bad-signature'] as const;
    const refs: Record<string, string> = {};
    for (const m of modes) {
      refs[m] = await initialize();
      expect((await pay(refs[m], m)).status).toBe(200);
    }
    expect(await waitCredited(refs.normal!)).toBe(true);
    expect(await waitCredited(refs.twice!)).toBe(true);
    expect(await waitCredited(refs['out-of-order']!)).toBe(true);
    // No webhook, or only badly signed ones: nothing credits until the administrator's verify call.
    // A refused delivery is neither stored nor queued before its 401 goes out, and no delivery is
    // made in mode none: once a bad signature has been refused, no job exists that could credit.
    const refused = await waitFor(() => chaos.stack.paymentSim.deliveries().find((d) => d.reference === refs['bad-signature']), { what: 'a badly signed delivery' });
    expect(refused.status).toBe(401);
    expect(chaos.stack.paymentSim.deliveries().filter((d) => d.reference === refs.none)).toEqual([]);
    for (const ref of [refs.none!, refs['bad-signature']!]) {
      expect(await settledCreditJobs(chaos.stack, ref)).toEqual([]);
      expect(await status(ref)).toBe('pending');
    }
    for (const m of ['none', 'bad-signature', 'late'] as const) {
      const v = await verify(refs[m]!);
      expect(v.status, JSON.stringify(v.body)).toBe(200);
      expect(['Top-up successful', 'Top-up already credited']).toContain(v.body.message);
    }
    // Verifying again, and the late webhook landing after the verify, change nothing.
    for (const m of modes) expect((await verify(refs[m]!)).body.message).toBe('Top-up already credited');
    // The simulator's late delivery (10 s) lands after the verify calls; once its credit job has
    // finished, it has had its chance to credit twice.
    await waitFor(() => chaos.stack.paymentSim.deliveries().some((d) => d.reference === refs.late && d.status === 200), { what: 'the late webhook delivered', timeoutMs: 20_000 });
    const late = await settledCreditJobs(chaos.stack, refs.late!);
    expect(late.filter((j) => j.id.startsWith('credit-evt-')).map((j) => [j.state, j.returnvalue?.outcome])).toEqual([['completed', 'already_credited']]);
    await chaos.invariants({ settleMs: 30_000 });
  });

  it('When the same signed event is replayed concurrently and later, and an event arrives before the payment, then nothing is credited twice or early', async () => {
    // Before the payment: a validly signed charge.success for a reference the processor has not
    // charged yet. The credit job asks the processor and credits nothing.
    const early = await initialize();
    const claimed = JSON.stringify({
      event: 'charge.success',
      data: { id: 1, reference: early, amount: 1_000_000, currency: 'NGN', status: 'success', paid_at: new Date().toISOString(), fees: 0, metadata: {} },
    });
    expect((await postWebhook(claimed)).status).toBe(200);
    // Its credit job asked the processor, heard "not paid" and credited nothing.
    expect((await finishedJob(chaos.stack, 'credits', webhookCreditJobId(claimed))).returnvalue).toEqual({ outcome: 'not_paid', processorStatus: 'abandoned' });
    expect(await status(early)).toBe('pending');
    await pay(early, 'none');
    const real = await chargeEvent(early);
    const replays = await Promise.all(Array.from({ length: 10 }, () => postWebhook(real)));
    expect(replays.every((r) => r.status === 200)).toBe(true);
    expect(await waitCredited(early)).toBe(true);
    // Later, once credited: the real event and the early claim are delivered again.
    expect((await postWebhook(real)).status).toBe(200);
    expect((await postWebhook(claimed)).status).toBe(200);
    const jobs = await settledCreditJobs(chaos.stack, early);
    expect(jobs.map((j) => j.id).sort()).toEqual([webhookCreditJobId(claimed), webhookCreditJobId(real)].sort());
    expect(jobs.filter((j) => j.returnvalue?.outcome === 'credited')).toHaveLength(1);
    await chaos.invariants({ settleMs: 30_000 });
  });
});
