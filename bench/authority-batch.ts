import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { sql } from 'slonik';
import { z } from 'zod';
import { QUEUES, queuePrefix } from '../src/jobs/catalog.ts';
import { latencyFor } from '../src/simulators/identity-authority/latency.ts';
import type { ScenarioResult } from './authority-scenarios.ts';
import { sleep } from './lib/proc.ts';
import { atLeast, atMost, percentile, runTenantsLoad, statuses } from './lib/tenant-measure.ts';
import { startTenantStack, type TenantStack } from './lib/tenant-stack.ts';
import { randomLiveNin, type LoadRecord } from './tenants-load.ts';

const SLOW = { SIM_LATENCY_MEDIAN_MS: '1200', SIM_LATENCY_P95_MS: '4000' };
const DIST = { medianMs: 1200, p95Ms: 4000 };
const CAP = 32;
const PATIENT = { IDENTITY_TIMEOUT_MS: '20000', IDENTITY_MAX_CONCURRENCY: String(CAP), LOOKUP_CONCURRENCY: '32', IDENTITY_MAX_RPS: '0' };
const BATCH_ROWS = 5000;
const SYNC_S = 30;
const SPARE_WINDOW_S = 30;

const ms = (r: LoadRecord) => r.ms ?? Number.POSITIVE_INFINITY;
const n = z.object({ n: z.coerce.number() });

async function api(stack: TenantStack, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${stack.apiUrl}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Lookups of the batch decided (found or not found) between two wall-clock instants. */
const decided = (stack: TenantStack, batchId: string, fromMs: number, toMs: number) =>
  stack.db.oneFirst(sql.type(n)`
    SELECT count(*) AS n FROM verifications WHERE batch_id = ${batchId} AND status IN ('found', 'not_found')
      AND completed_at >= ${sql.timestamp(new Date(fromMs))} AND completed_at < ${sql.timestamp(new Date(toMs))}`);

/**
 * The lookups queue sampled every second: jobs running (at most the cap) and queued behind them. A
 * batch that keeps the authority busy shows `active` at the cap with lookups always queued; `active`
 * under the cap with nothing queued would mean the batch is fed too slowly.
 */
async function sampleQueue(stack: TenantStack, seconds: number) {
  const redis = new Redis(stack.redisUrl, { maxRetriesPerRequest: 2 });
  const q = new Queue(QUEUES.lookups, { connection: redis, prefix: queuePrefix(stack.prefix, QUEUES.lookups) });
  const samples: { active: number; queued: number }[] = [];
  try {
    for (let i = 0; i < seconds; i++) {
      const c = await q.getJobCounts('active', 'prioritized', 'wait');
      samples.push({ active: c.active ?? 0, queued: (c.prioritized ?? 0) + (c.wait ?? 0) });
      await sleep(1000);
    }
  } finally {
    await q.close();
    redis.disconnect();
  }
  const mean = (f: (s: { active: number; queued: number }) => number) => Math.round((samples.reduce((a, s) => a + f(s), 0) / Math.max(1, samples.length)) * 10) / 10;
  return { meanActive: mean((s) => s.active), meanQueued: mean((s) => s.queued), minQueued: Math.min(...samples.map((s) => s.queued)) };
}

/** p95 of these records against the p95 of the same NINs' records alone (the authority's time is seeded per NIN). */
function ratio(withBatch: LoadRecord[], alone: LoadRecord[]) {
  const aloneMs = new Map(alone.map((r) => [r.nin, ms(r)]));
  const p95 = percentile(withBatch.map(ms), 95);
  const same = percentile(withBatch.map((r) => aloneMs.get(r.nin) ?? Number.NaN).filter(Number.isFinite), 95);
  return { p95, same, ratio: p95 / same };
}

/**
 * A 5,000-row batch of organisation A against the authority at 1.2 s (global cap 32): B's and A's
 * own synchronous calls (2/s and 1/s, the same NINs as when measured alone) keep their p95; then,
 * with nobody else calling, the batch's own rate against the cap over the mean lookup time.
 */
export async function batchFairness(): Promise<ScenarioResult> {
  const stack = await startTenantStack({ apiProcesses: 2, workerProcesses: 2, sim: SLOW, env: PATIENT });
  try {
    const a = await stack.createOrg({ units: 1_000_000 });
    const b = await stack.createOrg({ units: 10_000 });
    const bNins = Array.from({ length: 60 }, () => randomLiveNin());
    const aNins = Array.from({ length: 30 }, () => randomLiveNin());
    const load = () =>
      runTenantsLoad({
        url: stack.apiUrl,
        timeoutS: 60,
        tenants: [
          { name: 'B', token: b.token, mode: 'open', rate: 2, nins: bNins, stopAtS: SYNC_S },
          { name: 'A', token: a.token, mode: 'open', rate: 1, nins: aNins, stopAtS: SYNC_S },
        ],
      });
    const alone = await load();

    const batchNins = Array.from({ length: BATCH_ROWS }, () => randomLiveNin());
    const meanS = batchNins.reduce((s, x) => s + latencyFor(`nin:${x}`, DIST), 0) / batchNins.length / 1000;
    const ideal = CAP / meanS;
    const created = await api(stack, a.token, 'POST', '/verify-nin/batches', { reason: 'corporate', rows: batchNins.map((x) => ({ nin: x })) });
    if (created.status !== 202) throw new Error(`batch refused: ${created.status} ${JSON.stringify(created.body)}`);
    const batchId = String(created.body.id);
    // The batch fills every authority slot before the synchronous calls start.
    await sleep(8000);
    const withBatch = await load();
    const bRatio = ratio(withBatch.B!, alone.B!);
    const aRatio = ratio(withBatch.A!, alone.A!);

    // Nobody else calls now: the batch alone, after a few seconds for the last synchronous calls to clear.
    await sleep(5000);
    const from = Date.now();
    const queueDuringWindow = await sampleQueue(stack, SPARE_WINDOW_S);
    const to = Date.now();
    const rate = (await decided(stack, batchId, from, to)) / ((to - from) / 1000);

    const before = await api(stack, a.token, 'GET', `/verify-nin/batches/${batchId}`);
    const cancelled = await api(stack, a.token, 'POST', `/verify-nin/batches/${batchId}/cancel`);
    let ledger = await stack.ledger();
    for (const deadline = Date.now() + 120_000; Date.now() < deadline && (ledger.pending > 0 || ledger.reserved > 0); await sleep(500)) ledger = await stack.ledger();
    const after = await api(stack, a.token, 'GET', `/verify-nin/batches/${batchId}`);
    return {
      name: 'batch_fairness',
      targets: [
        atMost('batch_bystander_p95_ratio', bRatio.ratio, 1.25, { note: `B p95 ${Math.round(bRatio.p95)} ms with the batch, ${Math.round(bRatio.same)} ms alone for the same NINs` }),
        atMost('batch_owner_sync_p95_ratio', aRatio.ratio, 1.25, { note: `A's own p95 ${Math.round(aRatio.p95)} ms with its batch, ${Math.round(aRatio.same)} ms alone` }),
        atLeast('batch_spare_capacity_ratio', rate / ideal, 0.9, { note: `${rate.toFixed(1)} lookups/s of ${ideal.toFixed(1)}/s (${CAP} slots / ${meanS.toFixed(2)} s mean lookup)` }),
        atMost('batch_reserved_at_rest', ledger.reserved + ledger.pending + ledger.duplicateDebits, 0),
      ],
      facts: {
        aloneStatuses: { A: statuses(alone.A!), B: statuses(alone.B!) },
        withBatchStatuses: { A: statuses(withBatch.A!), B: statuses(withBatch.B!) },
        batchBeforeCancel: before.body,
        batchAfterCancel: { status: cancelled.status, ...after.body },
        ideal,
        rate,
        queueDuringWindow,
      },
    };
  } finally {
    await stack.stop();
  }
}
