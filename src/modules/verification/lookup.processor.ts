import { DelayedError, type Job } from 'bullmq';
import { jobIds, type JobPayload, type JobResult } from '../../jobs/catalog.ts';
import type { Producer } from '../../jobs/producer.ts';
import type { BackgroundLane, FairShare } from '../../context.ts';
import { describe } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import type { DebitFollowUp } from '../wallet/index.ts';
import { RetryLater } from './background.ts';
import { faceOfPayload, newLookupReport, releaseLookupSlot, runLookup, type LookupDeps } from './lookup.job.ts';

/**
 * What the `verification.lookup` job needs besides the lookup's own deps: the queue (to report a
 * batch row's settlement), the fair share and the background lane, and what follows a debit
 * (alerts' followDebit, handed in by the worker: verification does not import alerts).
 */
export type LookupJobDeps = LookupDeps & {
  producer: Producer;
  fairShare: FairShare;
  lane: Pick<BackgroundLane, 'run'>;
  followDebit: (orgId: number, followUp: DebitFollowUp, log: Logger) => Promise<void>;
};

/**
 * The `verification.lookup` job, as BullMQ hands it over: `token` is the worker's lock on the job, to
 * move it back to the delayed set from inside while the authority is down.
 */
export async function runLookupJob(deps: LookupJobDeps, payload: JobPayload<'verification.lookup'>, job: Job, log: Logger, token?: string): Promise<JobResult<'verification.lookup'>> {
  const firstRun = job.attemptsStarted <= 1 && job.stalledCounter === 0;
  // Asynchronous and batch lookups wait in the queue on purpose: only synchronous waits are measured.
  const background = payload.delivery !== undefined && payload.acceptedAt !== undefined ? { acceptedAt: payload.acceptedAt, tries: Math.max(1, job.attemptsStarted), delivery: payload.delivery } : undefined;
  if (firstRun && !background && job.processedOn) deps.metrics.lookupWait.observe(Math.max(0, job.processedOn - job.timestamp) / 1000);
  // The virtual time of the fair queuing moves up to this lookup's tag (its priority).
  if (job.opts.priority) await deps.fairShare.started(job.opts.priority);
  const started = Date.now();
  // A vNIN is erased from the job before it is used: from here it lives in this process only, and a
  // rerun of the job (a stalled worker: the call may have gone out) finds nothing to look up.
  const { query: _token, ...withoutToken } = payload;
  if (payload.useOnce && payload.query) await job.updateData(withoutToken);
  let result;
  const report = newLookupReport();
  try {
    result = await runLookup(deps, payload.referenceId, log, {
      sealedQuery: payload.query,
      firstRun,
      useOnce: payload.useOnce === true,
      ...(background ? { background } : {}),
      // A face match: its selfie, handed over with the found record to its comparison (face-settle.ts).
      ...faceOfPayload(payload),
      report,
    });
  } catch (err) {
    // The authority is down: back to the delayed set, keeping its priority and freeing its slot
    // (a delayed job does not count against the queue's global concurrency).
    if (err instanceof RetryLater && token) {
      log.debug({ referenceId: payload.referenceId, code: err.code, retryInMs: Math.round(err.delayMs) }, 'background lookup waits for the authority');
      // A one-shot lookup is tried again only when its call never left (RetryLater says so): its
      // sealed token goes back into the job for that next try.
      if (payload.useOnce && payload.query) await job.updateData(payload);
      await job.moveToDelayed(Date.now() + err.delayMs, token);
      throw new DelayedError();
    }
    throw err;
  }
  // Settled, whatever the outcome: the organisation's in-flight slot goes back. A throw (our own
  // fault) keeps it, since BullMQ runs the job again.
  const orgId = payload.orgId;
  const afterSettled = async () => {
    if (orgId !== undefined) await releaseLookupSlot(deps.fairShare, { orgId, referenceId: payload.referenceId, result, startedAt: started, background: !!background }, log);
    // This run's debit may have crossed the low-balance line or queued an automatic top-up.
    if (report.followUp && orgId !== undefined) await deps.followDebit(orgId, report.followUp, log);
  };
  // For a background lookup, one more step of the background lane (background-lane.ts).
  await (background ? deps.lane.run(afterSettled) : afterSettled());
  // A batch row: its settlement is reported to the batches module as a job of its own (it notes the
  // row's end and feeds the batch, workers/processors/batches.ts), queued before this job completes
  // so that a crash in between reports it again. A report not queued is made up by the periodic feed.
  if (payload.batchId) {
    const settled = { batchId: payload.batchId, referenceId: payload.referenceId, outcome: result.outcome, ...(result.code ? { code: result.code } : {}) };
    await deps.producer
      .enqueue('batch.lookup-settled', settled, { jobId: jobIds.batchSettled(payload.referenceId), removeOnComplete: true, removeOnFail: true })
      .catch((err: unknown) => log.warn({ err: describe(err), referenceId: payload.referenceId }, 'batch not told of its lookup; the periodic feed makes it up'));
  }
  return result;
}
