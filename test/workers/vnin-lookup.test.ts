// The vNIN lookup job run by hand: the token leaves the job as its lookup starts, a rerun never uses
// it twice, and the sweep cannot re-queue a lost vNIN job (the token went with it).
import type { Job } from 'bullmq';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { jobIds, QUEUES } from '../../src/jobs/catalog.ts';
import { createLogger } from '../../src/lib/logger.ts';
import type { Producer } from '../../src/jobs/producer.ts';
import type { WorkerDeps } from '../../src/context.ts';
import { verificationProcessors } from '../../workers/processors/verification.ts';
import type { OrgFixture, Stack } from '../setup/harness.ts';
import { startWorkerHarness, type WorkerHarness } from '../setup/worker-harness.ts';

const log = createLogger({ level: 'silent' });
const lookup = verificationProcessors['verification.lookup']!;
const sweep = verificationProcessors['verification.sweep']!;

// No workers in this process: each lookup job stays queued (callers give up after 300 ms, 504).
let stack: Stack;
let producer: Producer;
let deps: WorkerDeps;
let harness: WorkerHarness;
beforeAll(async () => {
  harness = await startWorkerHarness({ env: { VERIFY_WAIT_MS: '300' } });
  ({ stack, producer, deps } = harness);
});
afterAll(async () => harness?.close());

const lookups = () => producer.queue(QUEUES.lookups);
const wallet = (orgId: number) =>
  stack.db.one(sql.type(z.object({ units: z.coerce.number(), reserved: z.coerce.number() }))`SELECT units, reserved FROM wallets WHERE org_id = ${orgId}`);
const rowOf = (ref: string) =>
  stack.db.one(sql.type(z.object({ status: z.string(), failure_code: z.string().nullable(), holds_unit: z.boolean() }))`
    SELECT status, failure_code, holds_unit FROM verifications WHERE reference_id = ${ref}`);

async function issue(nin: string): Promise<string> {
  const res = await fetch(`${stack.identitySim.url}/sandbox/vnin`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ nin, enterprise_code: '000000' }) });
  expect(res.status).toBe(201);
  return ((await res.json()) as { vnin: string }).vnin;
}

/** A live vNIN verification left pending: the API answered 504 and its job waits in the queue. */
async function pending(org: OrgFixture, vnin: string): Promise<{ ref: string; job: Job }> {
  const res = await stack.api('POST', '/v1/verify-nin/vnin', { token: org.member.token, json: { vnin, reason: 'corporate' } });
  expect(res.status).toBe(504);
  const ref = res.body.reference_id as string;
  const job = (await lookups().getJob(jobIds.lookup(ref)))!;
  expect(job).toBeTruthy();
  return { ref, job };
}

describe('vNIN lookup job', () => {
  it('When the job runs, then the token leaves its data before the call; a rerun finds nothing to look up and asks the authority no more', async () => {
    const org = await stack.createOrg({ units: 2 });
    const token = await issue('31415926535');
    const { ref, job } = await pending(org, token);
    expect(Object.keys(job.data).sort()).toEqual(['orgId', 'query', 'referenceId', 'requestId', 'useOnce']);
    expect(JSON.stringify(job.data)).not.toContain(token);

    const calls = stack.identitySim.stats().calls;
    const result = await lookup(job.data, job, deps, log);
    expect(result.outcome).toBe('found');
    expect(stack.identitySim.stats().calls).toBe(calls + 1);
    const stored = await lookups().getJob(jobIds.lookup(ref));
    expect(Object.keys(stored!.data).sort()).toEqual(['orgId', 'referenceId', 'requestId', 'useOnce']);

    // The same job again (a stalled worker): the row is settled and is only read back.
    expect(await lookup(stored!.data, stored!, deps, log)).toEqual({ outcome: 'found' });
    expect(stack.identitySim.stats().calls).toBe(calls + 1);
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 0 });
  });

  it('When a vNIN job is rerun before it settled (its token already erased), then it ends failed and the unit goes back, without a call', async () => {
    const org = await stack.createOrg({ units: 1 });
    const { ref, job } = await pending(org, await issue('27182818284'));
    const calls = stack.identitySim.stats().calls;
    const erased = { referenceId: ref, orgId: org.orgId, useOnce: true as const };
    expect(await lookup(erased, job, deps, log)).toEqual({ outcome: 'failed', code: 'lookup_abandoned' });
    expect(stack.identitySim.stats().calls).toBe(calls);
    expect(await rowOf(ref)).toEqual({ status: 'failed', failure_code: 'lookup_abandoned', holds_unit: false });
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 0 });
    const requery = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } });
    expect(requery.status).toBe(502);
    expect(requery.body).toMatchObject({ code: 'lookup_abandoned', reference_id: ref });
    expect(requery.body.detail).toMatch(/ask the person for a new one/);
  });

  it('When a pending vNIN lookup lost its job, then the sweep fails it and releases its unit instead of queueing it again', async () => {
    const org = await stack.createOrg({ units: 1 });
    const lost = await pending(org, await issue('16180339887'));
    await stack.db.query(sql.unsafe`UPDATE verifications SET created_at = now() - interval '10 minutes' WHERE reference_id = ${lost.ref}`);
    await lost.job.remove();
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 1 });

    expect(await sweep({}, lost.job, deps, log)).toEqual({ requeued: 0, released: 1 });
    expect(await lookups().getJob(jobIds.lookup(lost.ref))).toBeUndefined();
    expect(await rowOf(lost.ref)).toEqual({ status: 'failed', failure_code: 'lookup_abandoned', holds_unit: false });
    expect(await wallet(org.orgId)).toEqual({ units: 1, reserved: 0 });
  });
});
