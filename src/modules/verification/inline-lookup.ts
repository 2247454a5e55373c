import { setTimeout as sleep } from 'node:timers/promises';
import { JOBS, type JobPayload } from '../../jobs/catalog.ts';
import type { WaitOutcome } from '../../jobs/producer.ts';
import { describe } from '../../lib/errors.ts';
import type { FairShare } from '../../context.ts';
import type { Logger } from '../../lib/logger.ts';
import { leaveIntake } from '../../lib/intake.ts';
import { createPriorityGate } from '../../lib/priority-gate.ts';
import type { DebitFollowUp } from '../wallet/index.ts';
import { faceOfPayload, newLookupReport, releaseLookupSlot, runLookup, type LookupDeps } from './lookup.job.ts';

/** enqueueAndWait's contract for the one job it replaces: the same payload in, the same outcomes out. */
export type InlineLookup = (payload: JobPayload<'verification.lookup'>, opts: { timeoutMs: number; priority?: number }) => Promise<WaitOutcome<'verification.lookup'>>;

/**
 * The lookup job run in the calling process instead of through the queue (LOOKUP_INLINE, the
 * benchmark's yardstick). Everything but the queue is the same: the job function, the authority's
 * shared breaker and call spacing, the organisation's slot given back at the end, BullMQ's attempts
 * and backoff for our own faults, and the authority's concurrency limit, here held in-process (with
 * one API process that is the whole limit) and handed out by the same priority. A wait that runs out
 * answers `timeout` while the lookup goes on, as a job outlives its waiter.
 */
export function createInlineLookup(
  deps: LookupDeps & { fairShare: FairShare; logger: Logger; followDebit: (orgId: number, followUp: DebitFollowUp, log: Logger) => Promise<void> },
  o: { maxConcurrency: number },
): InlineLookup {
  const gate = createPriorityGate(o.maxConcurrency);
  const def = JOBS['verification.lookup'];

  async function run(payload: JobPayload<'verification.lookup'>, priority: number): Promise<WaitOutcome<'verification.lookup'>> {
    const log = deps.logger.child({ job: 'verification.lookup', ...(payload.requestId ? { reqId: payload.requestId } : {}) });
    const queuedAt = Date.now();
    // Its work is handed on here as a job would be queued: a request's intake slot goes back.
    leaveIntake();
    const leave = await gate.enter(priority);
    try {
      if (priority > 0) await deps.fairShare.started(priority);
      deps.metrics.lookupWait.observe((Date.now() - queuedAt) / 1000);
      for (let attempt = 1; ; attempt++) {
        const started = Date.now();
        const report = newLookupReport();
        try {
          const result = def.result.parse(await runLookup(deps, payload.referenceId, log.child({ attempt }), { sealedQuery: payload.query, firstRun: attempt === 1, ...faceOfPayload(payload), report }));
          if (payload.orgId !== undefined) {
            await releaseLookupSlot(deps.fairShare, { orgId: payload.orgId, referenceId: payload.referenceId, result, startedAt: started }, log);
            // As the worker's job does: the baseline does the same work but the queue.
            if (report.followUp) await deps.followDebit(payload.orgId, report.followUp, log);
          }
          return { status: 'completed', result };
        } catch (err) {
          log.warn({ err: describe(err) }, 'job attempt failed');
          if (attempt >= def.attempts) return { status: 'failed', reason: err instanceof Error ? err.message : String(err) };
          await sleep(def.backoffMs * 2 ** (attempt - 1));
        }
      }
    } finally {
      leave();
    }
  }

  return async (payload, opts) => {
    const running = run(payload, opts.priority ?? 0);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<WaitOutcome<'verification.lookup'>>((resolve) => {
      timer = setTimeout(() => resolve({ status: 'timeout' }), opts.timeoutMs);
    });
    try {
      return await Promise.race([running, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  };
}
