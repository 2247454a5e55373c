import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { loadavg } from 'node:os';
import { sql } from 'slonik';
import { z } from 'zod';
import { QUEUES, queuePrefix } from '../src/jobs/catalog.ts';
import type { ScenarioResult } from './authority-scenarios.ts';
import { sleep } from './lib/proc.ts';
import { atMost, percentile, round, runTenantsLoad, statuses } from './lib/tenant-measure.ts';
import { startTenantStack, type TenantStack } from './lib/tenant-stack.ts';
import { randomLiveNin, type LoadRecord } from './tenants-load.ts';

/**
 * A batch against the sandbox authority as it comes (answers at once): the authority's slots are not
 * the limit, our own CPU is (the API, the workers, PostgreSQL and Redis share the machine's cores).
 * B, another organisation, sends synchronous verifications alone, then again while A's 20,000-row
 * batch runs; `batch_fast_authority_bystander_p95_ratio` is B's p95 with the batch over its p95 alone.
 * The batch's rows per second (created to completed) are printed, no goal.
 */
const BATCH_ROWS = Number(process.env.BENCH_FAST_BATCH_ROWS ?? 20_000);
const B_RATE = 5;
const B_SECONDS = 30;
// B starts once the batch is well under way, and stops well before it ends (at about 230 rows/s today).
const B_AFTER_MS = 5_000;

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

/** The lookups queue sampled every second while B runs: jobs running, and queued behind them. */
async function sampleQueue(stack: TenantStack, until: Promise<unknown>) {
  const redis = new Redis(stack.redisUrl, { maxRetriesPerRequest: 2 });
  const q = new Queue(QUEUES.lookups, { connection: redis, prefix: queuePrefix(stack.prefix, QUEUES.lookups) });
  const samples: { active: number; queued: number }[] = [];
  let done = false;
  void until.finally(() => (done = true));
  try {
    while (!done) {
      const c = await q.getJobCounts('active', 'prioritized', 'wait');
      samples.push({ active: c.active ?? 0, queued: (c.prioritized ?? 0) + (c.wait ?? 0) });
      await sleep(1000);
    }
  } finally {
    await q.close();
    redis.disconnect();
  }
  const mean = (f: (s: { active: number; queued: number }) => number) => Math.round((samples.reduce((a, s) => a + f(s), 0) / Math.max(1, samples.length)) * 10) / 10;
  return { meanActive: mean((s) => s.active), meanQueued: mean((s) => s.queued) };
}

export async function batchFastAuthority(): Promise<ScenarioResult> {
  const stack = await startTenantStack({ apiProcesses: 2, workerProcesses: 2, env: { IDENTITY_MAX_RPS: '0' } });
  try {
    const a = await stack.createOrg({ units: 1_000_000 });
    const b = await stack.createOrg({ units: 100_000 });
    const bNins = Array.from({ length: 50 }, () => randomLiveNin());
    const load = () => runTenantsLoad({ url: stack.apiUrl, timeoutS: 60, tenants: [{ name: 'B', token: b.token, mode: 'open', rate: B_RATE, nins: bNins, stopAtS: B_SECONDS }] });
    // Warm-up (JIT, pools), not measured.
    await runTenantsLoad({ url: stack.apiUrl, timeoutS: 60, tenants: [{ name: 'B', token: b.token, mode: 'open', rate: B_RATE, nins: bNins, stopAtS: 5 }] });
    const alone = (await load()).B!;
    const aloneP95 = percentile(alone.map(ms), 95);
    const loadAlone = loadavg()[0]!;

    const before = await stack.ledger();
    const batchNins = Array.from({ length: BATCH_ROWS }, () => randomLiveNin());
    const t0 = Date.now();
    const created = await api(stack, a.token, 'POST', '/verify-nin/batches', { reason: 'corporate', rows: batchNins.map((x) => ({ nin: x })) });
    if (created.status !== 202) throw new Error(`batch refused: ${created.status} ${JSON.stringify(created.body)}`);
    const batchId = String(created.body.id);
    await sleep(B_AFTER_MS);
    const bRun = load();
    const queue = sampleQueue(stack, bRun);
    const withBatch = (await bRun).B!;
    const loadDuring = loadavg()[0]!;
    const withP95 = percentile(withBatch.map(ms), 95);
    const rowsAtBEnd = await stack.db.oneFirst(sql.type(n)`SELECT count(*) AS n FROM verifications WHERE batch_id = ${batchId} AND status <> 'pending'`);

    let status = '';
    for (const deadline = Date.now() + 900_000; Date.now() < deadline; await sleep(250)) {
      status = String((await api(stack, a.token, 'GET', `/verify-nin/batches/${batchId}`)).body.status);
      if (status === 'completed' || status === 'cancelled') break;
    }
    const seconds = (Date.now() - t0) / 1000;
    const found = await stack.db.oneFirst(sql.type(n)`SELECT count(*) AS n FROM verifications WHERE batch_id = ${batchId} AND status = 'found'`);
    let ledger = await stack.ledger();
    for (const deadline = Date.now() + 60_000; Date.now() < deadline && (ledger.pending > 0 || ledger.reserved > 0); await sleep(500)) ledger = await stack.ledger();
    const debits = ledger.debits - before.debits - withBatch.filter((r) => r.status === 200).length;
    return {
      name: 'batch_fast_authority',
      targets: [
        atMost('batch_fast_authority_bystander_p95_ratio', withP95 / aloneP95, 1.5, {
          note: `B p95 ${Math.round(withP95)} ms during the ${BATCH_ROWS}-row batch, ${Math.round(aloneP95)} ms alone (${B_RATE}/s for ${B_SECONDS} s each); load1 ${loadAlone.toFixed(2)} alone, ${loadDuring.toFixed(2)} with the batch`,
        }),
        atMost('batch_fast_authority_rows_not_found_or_not_charged_once', Math.abs(BATCH_ROWS - found) + Math.abs(debits - BATCH_ROWS) + ledger.duplicateDebits, 0),
        atMost('batch_fast_authority_reserved_at_rest', ledger.reserved + ledger.pending, 0),
      ],
      info: [{ target: 'batch_fast_authority_rows_per_second', value: round(BATCH_ROWS / seconds), note: `${BATCH_ROWS} rows in ${seconds.toFixed(1)} s, created to ${status}` }],
      facts: {
        aloneStatuses: statuses(alone),
        withBatchStatuses: statuses(withBatch),
        aloneP50: percentile(alone.map(ms), 50),
        withP50: percentile(withBatch.map(ms), 50),
        aloneP95,
        withP95,
        batchStatus: status,
        batchSeconds: seconds,
        rowsDecidedWhileBRan: rowsAtBEnd,
        found,
        debits,
        queueWhileBRan: await queue,
        load1: { alone: loadAlone, withBatch: loadDuring },
      },
    };
  } finally {
    await stack.stop();
  }
}
