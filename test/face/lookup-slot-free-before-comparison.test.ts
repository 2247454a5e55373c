import { Queue, QueueEvents } from 'bullmq';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { jobIds, QUEUES, queuePrefix, type JobPayload } from '../../src/jobs/catalog.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { createMetrics, type Metrics } from '../../src/lib/metrics.ts';
import { runComparisonJob, sweepPending } from '../../src/modules/verification/index.ts';
import { runLookup } from '../../src/modules/verification/lookup.job.ts';
import { startFaceWorker, type RunningFaceWorker } from '../../workers/face.ts';
import { startStack, type Stack } from '../setup/harness.ts';
import { faceConsent, faceMatchReads, HOPPER_NIN, HOPPER_SELFIE, testFaceEngine } from '../setup/face-match.ts';
import { waitFor } from '../setup/wait.ts';

/**
 * A face match's lookup job does not wait for its comparison: having found the record, it hands the
 * comparison to the face queue and completes, giving its lookup slot back, while the verification
 * stays pending holding its unit. The face worker then compares and settles it.
 *
 * The face worker runs in this process with an engine of the test's own (test/setup/face-match.ts):
 * every comparison matches. The worker that checks the selfie stops right after that check, so no
 * face worker runs while the lookup finishes; the test starts another later.
 */
const silent = createLogger({ level: 'silent' });
let stack: Stack;
let faceWorker: RunningFaceWorker | null = null;
const t = testFaceEngine();
let lookupEvents: QueueEvents;
const completedLookups = new Map<string, unknown>();

beforeAll(async () => {
  // A wait long enough that the test, not the API's budget, decides when the comparison runs.
  stack = await startStack({ env: { FACE_WAIT_MS: '60000', FACE_NICE: '0' } });
  faceWorker = await startFaceWorker(stack.config, silent, { engine: t.engine });
  lookupEvents = new QueueEvents(QUEUES.lookups, { connection: { url: inject('redisUrl') }, prefix: queuePrefix(stack.config.REDIS_PREFIX, QUEUES.lookups) });
  lookupEvents.on('completed', ({ jobId, returnvalue }) => completedLookups.set(jobId, typeof returnvalue === 'string' ? JSON.parse(returnvalue) : returnvalue));
  await lookupEvents.waitUntilReady();
}, 60_000);
afterAll(async () => {
  await lookupEvents?.close();
  await faceWorker?.close();
  await stack?.close();
});

const { ledger, wallet, verification } = faceMatchReads(() => stack.db);
const pendingRef = (orgId: number) => stack.db.maybeOneFirst(sql.type(z.object({ reference_id: z.string() }))`SELECT reference_id FROM verifications WHERE org_id = ${orgId} AND status = 'pending'`);

/** What a face worker's registry says it debited. */
const debited = async (m: Metrics) => (await m.unitsDebited.get()).values.reduce((a, v) => a + v.value, 0);

describe('the lookup does not wait for the comparison', () => {
  it('When a face match\'s record is found while no face worker runs, then its lookup job completes and gives its lookup slot back, the verification stays pending holding its unit (the sweep and a rerun of the lookup leave it to its comparison), and once a face worker starts it settles found, charged FACE_MATCH_UNITS once, also when its comparison runs again', async () => {
    const org = await stack.createOrg({ units: 5 });
    const faces = new Queue(QUEUES.face, { connection: { url: inject('redisUrl') }, prefix: queuePrefix(stack.config.REDIS_PREFIX, QUEUES.face) });
    try {
      const stopped = t.stopAfterNextSelfie(faceWorker!);
      const answer = stack.api('POST', '/v1/verify-nin/face', { token: org.member.token, json: { nin: HOPPER_NIN, reason: 'corporate', selfie: HOPPER_SELFIE, consent: faceConsent() } });
      const ref = await waitFor(() => pendingRef(org.orgId), { what: 'the pending face match' });
      // The lookup job completed: it handed the comparison over instead of settling or waiting.
      const done = await waitFor(() => completedLookups.get(jobIds.lookup(ref)), { what: 'the lookup job to complete', timeoutMs: 30_000 });
      expect(done).toEqual({ outcome: 'found', compareHandedOver: true });
      await stopped;
      // Its slot is back; the unit is still held on the pending row; the comparison waits for a face worker.
      expect(await stack.workers!.deps.fairShare.inFlight(org.orgId)).toEqual([]);
      expect((await stack.workers!.deps.fairShare.snapshot()).get(org.orgId) ?? 0).toBe(0);
      expect(await verification(ref)).toEqual({ status: 'pending', failure_code: null, holds_unit: true });
      expect(await wallet(org.orgId)).toEqual({ units: 5, reserved: 1 });
      expect(await ledger(org.orgId)).toEqual([]);
      const compare = await faces.getJob(jobIds.faceCompare(ref));
      expect(['waiting', 'prioritized']).toContain(await compare!.getState());
      // The sweep, seeing the row old enough to be abandoned, leaves it to its waiting comparison.
      await stack.db.query(sql.unsafe`UPDATE verifications SET created_at = now() - interval '10 minutes' WHERE reference_id = ${ref}`);
      expect(await sweepPending(stack.workers!.deps, silent)).toEqual({ requeued: 0, released: 0 });
      expect(await verification(ref)).toEqual({ status: 'pending', failure_code: null, holds_unit: true });
      // Its lookup job run again (a stalled worker) finds the comparison queued: no second lookup.
      expect(await runLookup(stack.workers!.deps, ref, silent)).toEqual({ outcome: 'found', compareHandedOver: true });
      const handedOver = compare!.data as JobPayload<'face.compare'>;

      faceWorker = await startFaceWorker(stack.config, silent, { engine: t.engine });
      const r = await answer;
      expect(r.status, r.text).toBe(200);
      expect(r.body.face).toMatchObject({ status: 'compared', match: true });
      expect(r.body.data.reference_id).toBe(ref);
      expect(await verification(ref)).toEqual({ status: 'found', failure_code: null, holds_unit: false });
      expect(await ledger(org.orgId)).toEqual([
        { kind: 'verification', units_delta: -1, reference: ref },
        { kind: 'face_match', units_delta: -(stack.config.FACE_MATCH_UNITS - 1), reference: ref },
      ]);
      expect(await wallet(org.orgId)).toEqual({ units: 5 - stack.config.FACE_MATCH_UNITS, reserved: 0 });
      // The face worker's own metrics count what it debited: the lookup's unit and the comparison's.
      expect(await debited(faceWorker.metrics)).toBe(stack.config.FACE_MATCH_UNITS);
      // The comparison's job left the queue with its selfie.
      expect(await faces.getJob(jobIds.faceCompare(ref))).toBeUndefined();
      // Run again (a crash between its settlement's COMMIT and its completion): answered from the row, charged once.
      const deps = stack.workers!.deps;
      const metrics = createMetrics({ process: 'face', defaults: false });
      const again = await runComparisonJob({ db: deps.db, config: deps.config, redis: deps.producer.redis, faceJob: { engine: t.engine, ring: deps.config.encryptionKeys }, followDebit: async () => {}, metrics }, handedOver, { attemptsMade: 0, opts: { attempts: 2 } }, silent);
      expect(again).toEqual({ outcome: 'found' });
      expect(await debited(metrics)).toBe(0);
      expect((await ledger(org.orgId)).length).toBe(2);
      expect(await wallet(org.orgId)).toEqual({ units: 5 - stack.config.FACE_MATCH_UNITS, reserved: 0 });
    } finally {
      await faces.close();
    }
  }, 60_000);
});
