import { eraseExpired, releaseLookupSlot, runLookup, sweepPending } from '../../src/modules/verification/index.ts';
import type { ProcessorMap } from '../context.ts';

export const verificationProcessors: ProcessorMap = {
  'verification.lookup': async (payload, job, deps, log) => {
    const firstRun = job.attemptsStarted <= 1 && job.stalledCounter === 0;
    if (firstRun && job.processedOn) deps.metrics.lookupWait.observe(Math.max(0, job.processedOn - job.timestamp) / 1000);
    // The virtual time of the fair queuing moves up to this lookup's tag (its priority).
    if (job.opts.priority) await deps.fairShare.started(job.opts.priority);
    const started = Date.now();
    const result = await runLookup(deps, payload.referenceId, log, { sealedQuery: payload.query, firstRun });
    // Settled, whatever the outcome: the organisation's in-flight slot goes back. A throw (our own
    // fault) keeps it, since BullMQ runs the job again.
    if (payload.orgId !== undefined) await releaseLookupSlot(deps.fairShare, { orgId: payload.orgId, referenceId: payload.referenceId, result, startedAt: started }, log);
    return result;
  },
  'verification.sweep': (_payload, _job, deps, log) => sweepPending(deps, log),
  'retention.erase': (_payload, _job, deps) => eraseExpired(deps),
};
