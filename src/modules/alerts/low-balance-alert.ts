import { randomUUID } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import type { Config } from '../../config.ts';
import { systemClock, type Clock } from '../../lib/clock.ts';
import type { Producer } from '../../jobs/producer.ts';
import { lagosMonthOf } from '../../lib/lagos-month.ts';
import type { Logger } from '../../lib/logger.ts';
import { lowBalanceRecipients } from '../organisations/index.ts';
import { deliverSoon, queueMail } from '../mail/index.ts';
import { claimLowBalanceAlert, lowBalanceDue } from '../wallet/index.ts';
import { recordWebhookEvent } from '../webhooks/index.ts';

export type AlertDeps = { db: DatabasePool; config: Config; logger: Logger; producer?: Producer; clock?: Clock };

/**
 * After a debit: when it took the balance below the organisation's line and no alert went out for
 * this stay below it, one e-mail to its administrators through the outbox. The flag and the outbox
 * row commit together; the cheap read first keeps the usual case (nothing to say) to one query.
 * Without a producer (operator commands) the outbox sweep sends it within a minute.
 */
export async function checkLowBalance(deps: AlertDeps, orgId: number): Promise<boolean> {
  if (!(await lowBalanceDue(deps.db, orgId))) return false;
  const outboxId = await deps.db.transaction(async (tx) => {
    const claimed = await claimLowBalanceAlert(tx, orgId);
    if (!claimed) return null;
    await recordWebhookEvent(tx, { orgId, type: 'wallet.low_balance', data: { balance: claimed.units, line: claimed.line } });
    const { organisation, recipients } = await lowBalanceRecipients(tx, orgId);
    const to = recipients.length > 0 ? recipients : [deps.config.MAIL_FALLBACK_TO];
    // The month whose statement (so far) the e-mail links: the Lagos month of now.
    const month = lagosMonthOf((deps.clock ?? systemClock).now());
    return queueMail(tx, deps.config, {
      dedupeKey: `low-balance-${orgId}-${randomUUID()}`,
      to,
      message: { template: 'low_balance', data: { organisation, balance: claimed.units, line: claimed.line, month } },
    });
  });
  if (outboxId === null) return false;
  deps.logger.info({ orgId, outboxId }, 'low-balance alert queued');
  await deliverSoon(deps.producer, outboxId, deps.logger, 'low-balance alert');
  return true;
}
