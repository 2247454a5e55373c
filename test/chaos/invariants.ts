import { Queue, type JobType } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { queuePrefix } from '../../src/jobs/catalog.ts';

/**
 * What must hold after any scenario, however rough: checked against PostgreSQL and Redis directly
 * (never through a chaos proxy) once the system has been given time to settle.
 *
 * 1. Every wallet's balance equals the sum of its ledger lines' units_delta.
 * 2. Reserved units are 0 at rest.
 * 3. Every successful live verification (status found, fixture false) has exactly one 'verification'
 *    ledger line; no 'verification' ledger line exists without one (no debit without a found lookup).
 * 4. Every credited top-up has exactly one 'topup' ledger line; no 'topup' line without a credited
 *    top-up; every reference the processor reports paid (the amount asked for) is credited exactly once.
 * 5. No job is lost: nothing left waiting, active, delayed or prioritised in the work queues, and no
 *    verification row stuck 'pending'.
 * 6. Batches: none left open (queued, running or paused: the scenarios fund every batch); every row
 *    ended exactly once (each lookup in one final state, with one verification unless it was cancelled
 *    before being queued, and the outcome of that verification); found live lookups are charged by
 *    (3) exactly once; a batch's cancelled rows hold no verification that is still deciding.
 */
export type InvariantOptions = {
  /** Direct PostgreSQL URL of the stack's database. */
  databaseUrl: string;
  /** Direct Redis URL and the stack's REDIS_PREFIX. */
  redisUrl: string;
  prefix: string;
  /** When given, every top-up is checked against the processor (simulator) verify endpoint. */
  processor?: { url: string; secretKey: string };
  /** How long to wait for queues to drain and pending rows to settle. */
  settleMs?: number;
};

export type InvariantReport = { violations: string[]; stats: Record<string, number> };

// The batches queue is left out like the maintenance queue: its schedule always has its next run
// delayed. Batches themselves are checked from the database (6).
const WORK_QUEUES = ['lookups', 'credits', 'emails'] as const;
const BUSY_STATES = ['wait', 'active', 'delayed', 'prioritized', 'waiting-children'] as const satisfies readonly JobType[];

async function queueBacklog(redis: Redis, prefix: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const name of WORK_QUEUES) {
    const q = new Queue(name, { connection: redis, prefix: queuePrefix(prefix, name) });
    try {
      const counts = await q.getJobCounts(...BUSY_STATES, 'completed', 'failed');
      for (const [state, n] of Object.entries(counts)) out[`${name}.${state}`] = n;
    } finally {
      await q.close();
    }
  }
  return out;
}

function busy(counts: Record<string, number>): number {
  return Object.entries(counts)
    .filter(([k]) => BUSY_STATES.some((s) => k.endsWith(`.${s}`)))
    .reduce((a, [, n]) => a + n, 0);
}

/** Waits (bounded) for the queues to drain and pending verifications to settle, then checks everything. */
export async function checkInvariants(o: InvariantOptions): Promise<InvariantReport> {
  const violations: string[] = [];
  const stats: Record<string, number> = {};
  const client = new pg.Client({ connectionString: o.databaseUrl });
  await client.connect();
  // The checker's own connection never queues commands forever: a Redis outage here is a test bug.
  const redis = new Redis(o.redisUrl, { maxRetriesPerRequest: 3 });
  try {
    const deadline = Date.now() + (o.settleMs ?? 60_000);
    let counts: Record<string, number> = {};
    let pending = 0;
    for (let i = 0; i < 10_000; i++) {
      counts = await queueBacklog(redis, o.prefix);
      pending = Number((await client.query(`SELECT count(*) AS n FROM verifications WHERE status = 'pending'`)).rows[0].n);
      const reserved = Number((await client.query(`SELECT COALESCE(sum(reserved), 0) AS n FROM wallets`)).rows[0].n);
      const openBatches = Number((await client.query(`SELECT count(*) AS n FROM verification_batches WHERE status IN ('queued', 'running', 'paused')`)).rows[0].n);
      if ((busy(counts) === 0 && pending === 0 && reserved === 0 && openBatches === 0) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    Object.assign(stats, counts);
    if (busy(counts) > 0) {
      violations.push(`jobs not finished after the settle period: ${JSON.stringify(Object.fromEntries(Object.entries(counts).filter(([k, n]) => n > 0 && BUSY_STATES.some((s) => k.endsWith(`.${s}`)))))}`);
    }
    if (pending > 0) violations.push(`${pending} verification row(s) stuck 'pending'`);

    const q = async (text: string) => (await client.query(text)).rows;

    for (const r of await q(`
      SELECT w.org_id, w.units, COALESCE(t.total, 0) AS ledger FROM wallets w
      LEFT JOIN (SELECT org_id, sum(units_delta) AS total FROM wallet_transactions GROUP BY org_id) t ON t.org_id = w.org_id
      WHERE w.units <> COALESCE(t.total, 0)`)) {
      violations.push(`wallet of org ${r.org_id}: balance ${r.units} but ledger sums to ${r.ledger}`);
    }
    for (const r of await q(`SELECT org_id, reserved FROM wallets WHERE reserved <> 0`)) {
      violations.push(`wallet of org ${r.org_id}: ${r.reserved} unit(s) still reserved at rest`);
    }
    for (const r of await q(`
      SELECT v.reference_id, count(t.id) AS n FROM verifications v
      LEFT JOIN wallet_transactions t ON t.reference = v.reference_id AND t.kind = 'verification'
      WHERE v.status = 'found' AND NOT v.fixture GROUP BY v.reference_id HAVING count(t.id) <> 1`)) {
      violations.push(`verification ${r.reference_id} found but has ${r.n} debit line(s)`);
    }
    for (const r of await q(`
      SELECT t.id, t.reference, v.status, v.fixture FROM wallet_transactions t
      LEFT JOIN verifications v ON v.reference_id = t.reference AND v.org_id = t.org_id
      WHERE t.kind = 'verification' AND (v.reference_id IS NULL OR v.status <> 'found' OR v.fixture)`)) {
      violations.push(`debit line ${r.id} (${r.reference}) without a found live verification (status ${r.status ?? 'none'})`);
    }
    for (const r of await q(`
      SELECT tp.reference, tp.status, count(t.id) AS n FROM topups tp
      LEFT JOIN wallet_transactions t ON t.reference = tp.reference AND t.kind = 'topup'
      GROUP BY tp.reference, tp.status
      HAVING (tp.status = 'credited' AND count(t.id) <> 1) OR (tp.status <> 'credited' AND count(t.id) <> 0)`)) {
      violations.push(`top-up ${r.reference} is ${r.status} with ${r.n} credit line(s)`);
    }
    for (const r of await q(`
      SELECT t.id, t.reference FROM wallet_transactions t LEFT JOIN topups tp ON tp.reference = t.reference AND tp.org_id = t.org_id
      WHERE t.kind = 'topup' AND tp.reference IS NULL`)) {
      violations.push(`credit line ${r.id} (${r.reference}) without a top-up of that organisation`);
    }
    for (const r of await q(`
      SELECT tp.reference, tp.units + tp.bonus_units AS expected, t.units_delta FROM topups tp
      JOIN wallet_transactions t ON t.reference = tp.reference AND t.kind = 'topup'
      WHERE t.units_delta <> tp.units + tp.bonus_units`)) {
      violations.push(`top-up ${r.reference} credited ${r.units_delta} units, expected ${r.expected}`);
    }

    for (const r of await q(`SELECT id, status FROM verification_batches WHERE status IN ('queued', 'running', 'paused')`)) {
      violations.push(`batch ${r.id} still ${r.status} after the settle period`);
    }
    for (const r of await q(`
      SELECT l.batch_id, l.idx, l.state, v.status, v.failure_code, (SELECT count(*) FROM verifications w WHERE w.batch_id = l.batch_id AND w.batch_lookup = l.idx) AS n
      FROM batch_lookups l LEFT JOIN verifications v ON v.reference_id = l.reference_id
      WHERE l.state IN ('waiting', 'queued')
         OR (l.state = 'cancelled' AND v.reference_id IS NOT NULL AND v.failure_code IS DISTINCT FROM 'batch_cancelled')
         OR (l.state IN ('found', 'not_found') AND (v.status IS DISTINCT FROM l.state))
         OR (l.state = 'failed' AND v.status IS DISTINCT FROM 'failed')
         OR (l.state <> 'cancelled' AND (SELECT count(*) FROM verifications w WHERE w.batch_id = l.batch_id AND w.batch_lookup = l.idx) <> 1)`)) {
      violations.push(`batch ${r.batch_id} lookup ${r.idx} is ${r.state} but its verification is ${r.status ?? 'none'} (${r.failure_code ?? '-'}), ${r.n} verification(s)`);
    }
    if (o.processor) {
      const topups = await q(`SELECT reference, status, total_amount FROM topups`);
      stats.topups = topups.length;
      let paid = 0;
      for (const t of topups) {
        const res = await fetch(`${o.processor.url}/transaction/verify/${encodeURIComponent(t.reference)}`, {
          headers: { authorization: `Bearer ${o.processor.secretKey}` },
        });
        if (res.status !== 200) continue;
        const body = (await res.json()) as { data?: { status?: string; amount?: number } };
        const processorPaid = body.data?.status === 'success' && Number(body.data.amount) === Number(t.total_amount);
        if (processorPaid) {
          paid++;
          if (t.status !== 'credited') violations.push(`top-up ${t.reference} is paid at the processor but ${t.status}`);
        } else if (t.status === 'credited') {
          violations.push(`top-up ${t.reference} credited but the processor reports ${body.data?.status} of ${body.data?.amount}`);
        }
      }
      stats.paid = paid;
    }
    const totals = (await q(`
      SELECT (SELECT count(*) FROM verifications) AS verifications,
             (SELECT count(*) FROM verifications WHERE status = 'found' AND NOT fixture) AS found,
             (SELECT count(*) FROM wallet_transactions WHERE kind = 'verification') AS debits,
             (SELECT count(*) FROM topups WHERE status = 'credited') AS credited,
             (SELECT count(*) FROM verification_batches) AS batches,
             (SELECT count(*) FROM batch_lookups WHERE state = 'found' AND NOT fixture) AS batch_found_live`))[0];
    for (const [k, v] of Object.entries(totals)) stats[k] = Number(v);
  } finally {
    await client.end();
    redis.disconnect();
  }
  return { violations, stats };
}

/** Throws with every violation listed. */
export async function assertInvariants(o: InvariantOptions): Promise<InvariantReport> {
  const report = await checkInvariants(o);
  if (report.violations.length > 0) {
    throw new Error(`invariants violated (${report.violations.length}):\n- ${report.violations.slice(0, 40).join('\n- ')}\nstats: ${JSON.stringify(report.stats)}`);
  }
  return report;
}
