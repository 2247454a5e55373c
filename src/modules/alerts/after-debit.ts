import type { Producer } from '../../jobs/producer.ts';
import { describe } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { queueAutoTopup } from '../topup/index.ts';
import type { DebitFollowUp } from '../wallet/index.ts';
import { checkLowBalance, type AlertDeps } from './low-balance-alert.ts';

/**
 * What follows a verification's debit, wherever the lookup ran (a worker's job, or the API with
 * LOOKUP_INLINE): the low-balance alert and the automatic top-up its trigger queued, each only when
 * the debit's own statement said it may be due (wallet/holds.ts), so the usual debit reads nothing
 * more. Neither failure is the lookup's: the next debit checks again, and the top-up sweep starts a
 * queued charge within a minute.
 */
export async function followDebit(deps: AlertDeps & { producer: Producer }, orgId: number, followUp: DebitFollowUp, log: Logger): Promise<void> {
  if (followUp.lowBalanceDue) await checkLowBalance(deps, orgId).catch((err: unknown) => log.warn({ err: describe(err), orgId }, 'low-balance check failed'));
  if (followUp.autoTopupDue) await queueAutoTopup(deps, orgId).catch((err: unknown) => log.warn({ err: describe(err), orgId }, 'automatic top-up not started; the sweep starts it'));
}
