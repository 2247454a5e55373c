import type { JobResult } from '../../jobs/catalog.ts';
import { describe } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { sweepAutoCharges } from './auto-charge.ts';
import { settleTopup } from './credit.ts';
import type { TopupDeps } from './deps.ts';
import { reconcileRefunds } from './refund.ts';
import * as repo from './topup.repository.ts';

const SWEEP_PARALLELISM = 4;

/**
 * Reconciles top-ups whose webhook never came. The window starts at TOPUP_SWEEP_MIN_AGE_SECONDS so
 * the webhook and verify paths have their time first; a race with them would be harmless anyway,
 * because crediting is idempotent per reference. It ends at TOPUP_SWEEP_MAX_AGE_HOURS, after which a
 * still-unpaid top-up is marked abandoned (a late webhook or verify still credits it). LIMIT bounds
 * each run; the least recently checked rows come first, so a backlog is worked through in turns.
 * Claimed refunds whose outcome is not known yet are checked against the processor too, and the
 * automatic top-ups' charges are reconciled (auto-charge.ts).
 */
export async function sweepTopups(deps: TopupDeps, log: Logger): Promise<JobResult<'topup.sweep'>> {
  const c = deps.config;
  const now = deps.clock.now();
  const references = await repo.listSweepCandidates(deps.db, {
    now,
    minAgeSeconds: c.TOPUP_SWEEP_MIN_AGE_SECONDS,
    maxAgeHours: c.TOPUP_SWEEP_MAX_AGE_HOURS,
    limit: c.TOPUP_SWEEP_BATCH,
  });
  let checked = 0;
  let credited = 0;
  let closed = 0;
  const queue = [...references];
  const worker = async (): Promise<void> => {
    for (let reference = queue.shift(); reference !== undefined; reference = queue.shift()) {
      try {
        const settled = await settleTopup(deps, reference, 'sweep', log);
        checked++;
        if (settled.result.outcome === 'credited') credited++;
        if (settled.closed) closed++;
      } catch (err) {
        // One unreachable or refusing check must not stop the batch; the next run tries again.
        log.warn({ reference, err: describe(err) }, 'sweep could not check a top-up');
      }
    }
  };
  await Promise.all(Array.from({ length: SWEEP_PARALLELISM }, worker));

  const abandoned = await repo.abandonExpired(deps.db, { now, maxAgeHours: c.TOPUP_SWEEP_MAX_AGE_HOURS, limit: c.TOPUP_SWEEP_BATCH });
  if (abandoned > 0) deps.metrics.topups.inc({ state: 'abandoned' }, abandoned);
  closed += abandoned;
  const refundsChecked = await reconcileRefunds(deps, log);
  // After the pending top-ups were settled above: automatic charges whose top-up ended without a credit end too.
  await sweepAutoCharges(deps, log);
  if (checked + abandoned + refundsChecked > 0) log.info({ checked, credited, closed, refundsChecked }, 'top-up sweep');
  return { checked, credited, closed };
}
