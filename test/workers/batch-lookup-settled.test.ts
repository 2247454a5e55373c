// A flow in one room: a batch row's lookup is started through the verification
// module's door, and its settlement comes back to the batches module as a job of its own
// (batch.lookup-settled), which alone notes the row and ends the batch. The jobs run by hand.
import type { Job } from 'bullmq';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { jobIds, QUEUES } from '../../src/jobs/catalog.ts';
import { createLogger } from '../../src/lib/logger.ts';
import type { Producer } from '../../src/jobs/producer.ts';
import type { WorkerDeps } from '../../src/context.ts';
import { batchProcessors } from '../../workers/processors/batches.ts';
import { verificationProcessors } from '../../workers/processors/verification.ts';
import type { OrgFixture, Stack } from '../setup/harness.ts';
import { startWorkerHarness, type WorkerHarness } from '../setup/worker-harness.ts';

const log = createLogger({ level: 'silent' });
const lookup = verificationProcessors['verification.lookup']!;
const feed = batchProcessors['batch.feed']!;
const settled = batchProcessors['batch.lookup-settled']!;
// batch.feed and batch.lookup-settled read their payload only.
const noJob = {} as Job;

let stack: Stack;
let producer: Producer;
let deps: WorkerDeps;
let harness: WorkerHarness;
beforeAll(async () => {
  harness = await startWorkerHarness({ env: { INTERACTIVE_QUIET_MS: '0' } });
  ({ stack, producer, deps } = harness);
});
afterAll(async () => harness?.close());

const q = sql.type(z.record(z.string(), z.any()));
const refsOf = async (batchId: string) =>
  (await stack.db.any(q`SELECT reference_id FROM verifications WHERE batch_id = ${batchId} ORDER BY batch_lookup`)).map((r) => r.reference_id as string);
const rowStates = async (batchId: string) => (await stack.db.any(q`SELECT state FROM batch_lookups WHERE batch_id = ${batchId} ORDER BY idx`)).map((r) => r.state as string);
const lookupJob = async (ref: string) => (await producer.queue(QUEUES.lookups).getJob(jobIds.lookup(ref)))!;

/** A batch of one found and one not-found live NIN, fed once: both lookups queued, their jobs waiting. */
async function fedBatch(org: OrgFixture): Promise<{ id: string; refs: string[] }> {
  const r = await stack.api('POST', '/v1/verify-nin/batches', { token: org.member.token, json: { reason: 'corporate', rows: [{ nin: '30000000001' }, { nin: '00000000001' }] } });
  expect(r.status).toBe(202);
  const id = r.body.id as string;
  expect(await feed({ batchId: id }, noJob, deps, log)).toEqual({ batches: 1, queued: 2 });
  const refs = await refsOf(id);
  expect(refs).toHaveLength(2);
  return { id, refs };
}

describe('the batch flow', () => {
  it('When a batch lookup settles, then its job reports it as batch.lookup-settled and leaves the batch alone; that job notes the row and ends the batch', async () => {
    const org = await stack.createOrg({ units: 5 });
    const { id, refs } = await fedBatch(org);
    for (const ref of refs) {
      const job = await lookupJob(ref);
      expect(job.data).toMatchObject({ referenceId: ref, orgId: org.orgId, delivery: 'batch', batchId: id });
      await lookup(job.data, job, deps, log);
    }
    // The verifications are decided; the batch has not heard of it yet.
    expect((await stack.db.any(q`SELECT status FROM verifications WHERE batch_id = ${id} ORDER BY batch_lookup`)).map((r) => r.status)).toEqual(['found', 'not_found']);
    expect(await rowStates(id)).toEqual(['queued', 'queued']);
    const reports = await Promise.all(refs.map(async (ref) => (await producer.queue(QUEUES.batches).getJob(jobIds.batchSettled(ref)))!));
    expect(reports.map((j) => [j.name, j.data])).toEqual([
      ['batch.lookup-settled', { batchId: id, referenceId: refs[0], outcome: 'found' }],
      ['batch.lookup-settled', { batchId: id, referenceId: refs[1], outcome: 'not_found' }],
    ]);
    for (const j of reports) expect(await settled(j.data, j, deps, log)).toEqual({ queued: 0 });
    expect(await rowStates(id)).toEqual(['found', 'not_found']);
    const b = await stack.api('GET', `/v1/verify-nin/batches/${id}`, { token: org.member.token });
    expect(b.body).toMatchObject({ status: 'completed', found: 1, not_found: 1, units_charged: 1 });
  });

  it('When a batch lookup settles twice (a rerun of its job), then its row and its batch take the end once', async () => {
    const org = await stack.createOrg({ units: 5 });
    const { id, refs } = await fedBatch(org);
    const [ref] = refs;
    const report = { batchId: id, referenceId: ref!, outcome: 'found' as const };
    await lookup((await lookupJob(ref!)).data, await lookupJob(ref!), deps, log);
    expect(await settled(report, noJob, deps, log)).toEqual({ queued: 0 });
    expect(await settled(report, noJob, deps, log)).toEqual({ queued: 0 });
    expect(await rowStates(id)).toEqual(['found', 'queued']);
    const b = await stack.api('GET', `/v1/verify-nin/batches/${id}`, { token: org.member.token });
    expect(b.body).toMatchObject({ status: 'running', found: 1, done: 1 });
  });

  it('When a queued batch lookup lost its job, then the periodic feed queues it again under its reference, accepted when it first was, and leaves a waiting one alone', async () => {
    const org = await stack.createOrg({ units: 5 });
    const { id, refs } = await fedBatch(org);
    const [lost, kept] = refs as [string, string];
    const before = await lookupJob(lost);
    const keptId = (await lookupJob(kept)).timestamp;
    await before.remove();
    expect(await producer.queue(QUEUES.lookups).getJob(jobIds.lookup(lost))).toBeUndefined();
    // The periodic pass over the organisation's open batches reconciles them (no batchId).
    expect(await feed({ orgId: org.orgId }, noJob, deps, log)).toEqual({ batches: 1, queued: 0 });
    const again = await lookupJob(lost);
    expect(again.data).toEqual({ referenceId: lost, orgId: org.orgId, delivery: 'batch', acceptedAt: before.data.acceptedAt, batchId: id });
    expect((await lookupJob(kept)).timestamp).toBe(keptId);
    expect(await rowStates(id)).toEqual(['queued', 'queued']);
    // No unit was held twice: one per lookup.
    expect(await stack.db.oneFirst(sql.type(z.object({ reserved: z.coerce.number() }))`SELECT reserved FROM wallets WHERE org_id = ${org.orgId}`)).toBe(2);
  });
});
