import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { jobIds, QUEUES } from '../../src/jobs/catalog.ts';
import { startStack, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

// Issue 29 item 17: background work (a batch being fed) yields to interactive lookups on the machine
// they share. Ordered by events: when each batch row was taken (its verification's created_at, the
// feeder's clock) against when the previous row's lookup job was queued (the job's own timestamp,
// the same process's clock).

let stack: Stack;
let seq = 0;
const liveNin = () => `4${String(Date.now() % 1e6).padStart(6, '0')}${String(seq++ % 1e4).padStart(4, '0')}`;
const rowOf = z.object({ batch_lookup: z.number(), reference_id: z.string(), created_ms: z.coerce.number() });
const ROWS = 6;

beforeAll(async () => {
  stack = await startStack();
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

const completed = (token: string, id: string) =>
  waitFor(
    async () => {
      const b = await stack.api('GET', `/v1/verify-nin/batches/${id}`, { token });
      return b.body.status === 'completed' ? b.body : null;
    },
    { what: `${id} completed`, timeoutMs: 60_000, intervalMs: 200 },
  );

describe('issue 29 item 17: background work yields to interactive lookups', () => {
  it('issue 29 item 17: When an interactive lookup of another organisation is in flight, then the batch takes its rows one at a time (each after the previous row was queued), and still takes them all', async () => {
    const a = await stack.createOrg({ units: 100 });
    const b = await stack.createOrg({ units: 10 });
    // The authority holds every call until told otherwise: B's lookup stays in flight while A's batch is fed.
    stack.identitySim.outage({ mode: 'hang', forMs: 120_000 });
    let batchId = '';
    try {
      const held = stack.api('POST', '/v1/verify-nin', { token: b.member.token, json: { nin: liveNin(), reason: 'corporate' } });
      // Its call is held at the authority: it was admitted (and counted) well before.
      await waitFor(() => stack.identitySim.stats().outageHeld >= 1, { what: "B's call held at the authority" });
      batchId = await postBatch(a.admin.token);
      const rows = await takenRows(batchId);
      // Every row waited for the previous one to be queued: none was taken alongside another.
      for (let i = 1; i < rows.length; i++) expect(rows[i]!.takenMs, `row ${rows[i]!.idx} taken after row ${rows[i - 1]!.idx} was queued`).toBeGreaterThanOrEqual(rows[i - 1]!.queuedMs);
      stack.identitySim.outage({ mode: 'none' });
      expect((await held).status).toBe(200);
    } finally {
      stack.identitySim.outage({ mode: 'none' });
    }
    const done = await completed(a.admin.token, batchId);
    expect(done).toMatchObject({ found: ROWS });
  });

  it('issue 29 item 17: When no interactive lookup is in flight, then the batch is fed as before, its rows taken together before any of their jobs is queued', async () => {
    const a = await stack.createOrg({ units: 100 });
    await waitFor(() => interactive() === 0, { what: 'no interactive lookup in flight' });
    const batchId = await postBatch(a.admin.token);
    const rows = await takenRows(batchId);
    expect(Math.max(...rows.map((r) => r.takenMs))).toBeLessThanOrEqual(Math.min(...rows.map((r) => r.queuedMs)));
    await completed(a.admin.token, batchId);
  });
});
