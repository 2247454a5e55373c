import type { JobResult } from '../../jobs/catalog.ts';
import { describe } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { settleTopup } from './credit.ts';
import type { TopupDeps } from './deps.ts';
import * as troubled from './troubled.repository.ts';

// A daily schedule drifts by seconds from one day to the next; half a day between checks of one
// top-up keeps it to one check per run without skipping a day.
const MIN_GAP_HOURS = 12;
const BATCHES_PER_RUN = 50;

/**
 * Re-checks abandoned top-ups with the processor, once a day for TOPUP_RECHECK_DAYS after they were
 * created, and credits the ones that were paid after all (a late payment whose webhook was lost).
 * Each check moves last_checked_at, so batches walk through the backlog and a top-up is seen once
 * per run; the batch count bounds a run. Racing a late webhook is harmless: crediting is
 * idempotent per reference.
 */
export async function recheckAbandoned(deps: TopupDeps, log: Logger): Promise<JobResult<'topup.recheck'>> {
  const c = deps.config;
  let checked = 0;
  let credited = 0;
  let refundDue = 0;
  for (let batch = 0; batch < BATCHES_PER_RUN; batch++) {
    const references = await troubled.listRecheckCandidates(deps.db, {
      now: deps.clock.now(),
      maxAgeDays: c.TOPUP_RECHECK_DAYS,
      minGapHours: MIN_GAP_HOURS,
      limit: c.TOPUP_SWEEP_BATCH,
    });
    let progressed = 0;
    for (const reference of references) {
      try {
        const settled = await settleTopup(deps, reference, 'recheck', log);
        checked++;
        progressed++;
        if (settled.result.outcome === 'credited') credited++;
        if (settled.result.outcome === 'refund_due') refundDue++;
      } catch (err) {
        // An unreachable processor leaves last_checked_at as it was: the next run tries again.
        log.warn({ reference, err: describe(err) }, 'abandoned top-up re-check failed');
      }
    }
    // A batch that moved nothing (the processor is down) would come back identical: stop here.
    if (references.length < c.TOPUP_SWEEP_BATCH || progressed === 0) break;
  }
  if (checked > 0) log.info({ checked, credited, refundDue }, 'abandoned top-ups re-checked');
  return { checked, credited, refundDue };
}
