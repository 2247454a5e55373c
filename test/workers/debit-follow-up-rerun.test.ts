// A lookup job run again after its settlement committed (the worker died between
// the capture's COMMIT and followDebit; BullMQ runs the stalled job again) must still follow the debit.
import type { Job } from 'bullmq';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { jobIds, QUEUES } from '../../src/jobs/catalog.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { setLowBalanceUnits } from '../../src/modules/organisations/low-balance.ts';
import { runLookup } from '../../src/modules/verification/lookup.job.ts';
import { verificationProcessors } from '../../workers/processors/verification.ts';
import { startWorkerHarness, type WorkerHarness } from '../setup/worker-harness.ts';

const log = createLogger({ level: 'silent' });
const lookup = verificationProcessors['verification.lookup']!;
const q = sql.type(z.record(z.string(), z.any()));

let harness: WorkerHarness;
beforeAll(async () => {
  harness = await startWorkerHarness({ env: { VERIFY_WAIT_MS: '300' } });
});
afterAll(async () => harness?.close());

describe('the debit follow-up survives a rerun of its job', () => {
  it('When the worker dies after the found settlement committed and the job runs again, then the low-balance alert the debit made due is still queued', async () => {
    const { stack, producer, deps } = harness;
    const org = await stack.createOrg({ units: 3 });
    // 3 units, line 3: the one debit leaves 2, below the line.
    await setLowBalanceUnits(stack.db, org.orgId, 3);
    const res = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '31415926535', reason: 'corporate' } });
    expect(res.status).toBe(504);
    const ref = res.body.reference_id as string;
    const job = (await producer.queue(QUEUES.lookups).getJob(jobIds.lookup(ref)))! as Job;

    // The first run: the processor's runLookup settles (capture committed), then the process dies
    // before its afterSettled step (followDebit) runs.
    const first = await runLookup(deps, ref, log, { sealedQuery: job.data.query, firstRun: true });
    expect(first.outcome).toBe('found');
    const wallet = await stack.db.one(q`SELECT units::int, low_balance_alerted FROM wallets WHERE org_id = ${org.orgId}`);
    expect(wallet).toEqual({ units: 2, low_balance_alerted: false });

    // BullMQ runs the stalled job again.
    const rerun = Object.assign(Object.create(job) as Job, { attemptsStarted: 2, stalledCounter: 1 });
    expect(await lookup(job.data, rerun, deps, log)).toEqual({ outcome: 'found' });

    // Nothing else will debit this wallet (no verification comes while nobody is told), and no sweep
    // looks for due alerts: the rerun is the last chance.
    const alerts = await stack.db.oneFirst(q`SELECT count(*)::int FROM outbox WHERE kind = 'low_balance_email' AND dedupe_key LIKE ${`low-balance-${org.orgId}-%`}`);
    expect(alerts).toBe(1);
  });
});
