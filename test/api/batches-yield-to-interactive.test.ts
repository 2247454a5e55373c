import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { jobIds, QUEUES } from '../../src/jobs/catalog.ts';
import { startStack, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

// Background work (a batch being fed) yields to interactive lookups on the machine
// they share. Ordered by events: when each batch row was taken (its verification's created_at, the
// feeder's clock) against when the previous row's lookup job was queued (the job's own timestamp,
// the same process's clock).

let stack: Stack;
let seq = 0;
const liveNin = () => `4${String(Date.now() % 1e6).padStart(6, '0')}${String(seq++ % 1e4).padStart(4, '0')}`;
const rowOf = z.object({ batch_lookup: z.number(), reference_id: z.string(), created_ms: z.coerce.number() });
const ROWS = 6;

beforeAll(async () => {
  // No quiet period: the lane is busy exactly while an interactive lookup is in flight, so each test
  // decides it by what it holds (the quiet period is the unit test's, on a clock of its own).
  // One row a second at most, so the depth is its floor of two whatever the mean lookup time.
  stack = await startStack({ env: { INTERACTIVE_QUIET_MS: '0', BATCH_QUEUE_DEPTH_WHILE_INTERACTIVE: '2', BATCH_ROWS_PER_SECOND_WHILE_INTERACTIVE: '1' } });
});
afterAll(async () => stack?.close());

/** Interactive lookups in flight as the workers' lane last heard (0 where there is no lane). */
const interactive = () => stack.workers!.deps.lane?.interactive ?? 0;

/** Each row of the batch: when it was taken, and when its lookup job was queued. */
async function takenRows(batchId: string) {
  const rows = await waitFor(
    async () => {
      const rs = await stack.db.any(sql.type(rowOf)`
        SELECT batch_lookup, reference_id, (extract(epoch FROM created_at) * 1000)::float8 AS created_ms
        FROM verifications WHERE batch_id = ${batchId} ORDER BY batch_lookup`);
      return rs.length === ROWS ? rs : null;
    },
    { what: `the ${ROWS} rows of ${batchId} taken`, timeoutMs: 30_000 },
  );
  const queue = stack.workers!.deps.producer.queue(QUEUES.lookups);
  const out = [];
  for (const r of rows) {
    const job = await waitFor(() => queue.getJob(jobIds.lookup(r.reference_id)), { what: `job of row ${r.batch_lookup}` });
    out.push({ idx: r.batch_lookup, takenMs: r.created_ms, queuedMs: job.timestamp });
  }
  return out;
}

async function postBatch(token: string) {
  const res = await stack.api('POST', '/v1/verify-nin/batches', { token, json: { reason: 'corporate', rows: Array.from({ length: ROWS }, () => ({ nin: liveNin() })) } });
  expect(res.status).toBe(202);
  return String(res.body.id);
}

const spanOf = z.object({ batch_lookup: z.number(), taken_ms: z.coerce.number(), ended_ms: z.coerce.number() });

/** Each row's lookup: taken (the feeder's clock) and settled (PostgreSQL's, cut to the millisecond). */
const spans = (batchId: string) =>
  stack.db.any(sql.type(spanOf)`
    SELECT batch_lookup, (extract(epoch FROM created_at) * 1000)::float8 AS taken_ms,
           (extract(epoch FROM date_trunc('milliseconds', completed_at)) * 1000)::float8 AS ended_ms
    FROM verifications WHERE batch_id = ${batchId} ORDER BY batch_lookup`);

const completed = (token: string, id: string) =>
  waitFor(
    async () => {
      const b = await stack.api('GET', `/v1/verify-nin/batches/${id}`, { token });
      return b.body.status === 'completed' ? b.body : null;
    },
    { what: `${id} completed`, timeoutMs: 60_000, intervalMs: 200 },
  );

describe('background work yields to interactive lookups', () => {
  it('When an interactive lookup of another organisation is in flight, then the batch keeps at most BATCH_QUEUE_DEPTH_WHILE_INTERACTIVE lookups queued, takes its rows one at a time, and still takes them all', async () => {
    const a = await stack.createOrg({ units: 100 });
    const b = await stack.createOrg({ units: 10 });
    // B's lookup admitted and not yet settled, as the API's admission counts one: it stays in flight
    // for the whole batch (a call held at the authority would hold A's calls too).
    const fairShare = stack.workers!.deps.fairShare;
    const held = { orgId: b.orgId, referenceId: `held-${Date.now()}` };
    expect((await fairShare.admit({ ...held, cap: 10 })).admitted).toBe(true);
    let batchId = '';
    try {
      await waitFor(() => interactive() >= 1, { what: "the workers' lane heard B's lookup" });
      batchId = await postBatch(a.admin.token);
      const rows = await takenRows(batchId);
      // Every row waited for the previous one to be queued: none was taken alongside another.
      for (let i = 1; i < rows.length; i++) expect(rows[i]!.takenMs, `row ${rows[i]!.idx} taken after row ${rows[i - 1]!.idx} was queued`).toBeGreaterThanOrEqual(rows[i - 1]!.queuedMs);
      const done = await completed(a.admin.token, batchId);
      expect(done).toMatchObject({ found: ROWS });
      // B was in flight from before the batch to its end.
      expect(interactive()).toBeGreaterThanOrEqual(1);
    } finally {
      await fairShare.finish(held);
    }
    // When each row was taken, at most one other was queued and not yet settled: a depth of two.
    const s = await spans(batchId);
    expect(s).toHaveLength(ROWS);
    for (const r of s) {
      const others = s.filter((o) => o.batch_lookup !== r.batch_lookup && o.taken_ms <= r.taken_ms && o.ended_ms > r.taken_ms);
      expect(others.length, `lookups in flight when row ${r.batch_lookup} was taken: ${others.map((o) => o.batch_lookup).join(', ')}`).toBeLessThanOrEqual(1);
    }
  });

  it('When no interactive lookup is in flight, then the batch is fed as before, its rows taken together before any of their jobs is queued', async () => {
    const a = await stack.createOrg({ units: 100 });
    await waitFor(() => interactive() === 0, { what: 'no interactive lookup in flight' });
    const batchId = await postBatch(a.admin.token);
    const rows = await takenRows(batchId);
    expect(Math.max(...rows.map((r) => r.takenMs))).toBeLessThanOrEqual(Math.min(...rows.map((r) => r.queuedMs)));
    await completed(a.admin.token, batchId);
    // All six were in flight together when the last was taken: the full depth, not two.
    const s = await spans(batchId);
    const last = Math.max(...s.map((r) => r.taken_ms));
    expect(s.filter((r) => r.ended_ms >= last)).toHaveLength(ROWS);
  });
});
