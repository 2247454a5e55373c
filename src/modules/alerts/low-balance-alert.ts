import { randomUUID } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import type { Config } from '../../config.ts';
import { systemClock, type Clock } from '../../lib/clock.ts';
import type { Producer } from '../../jobs/producer.ts';
import { lagosMonthOf } from '../../lib/lagos-month.ts';
import type { Logger } from '../../lib/logger.ts';
import { lowBalanceRecipients } from '../organisations/index.ts';
import { deliverSoon, queueSealedMail, type SealedMail } from '../mail/index.ts';
import { claimLowBalanceAlert, lowBalanceDue } from '../wallet/index.ts';
import { recordWebhookEvent } from '../webhooks/index.ts';

export type AlertDeps = { db: DatabasePool; config: Config; logger: Logger; producer?: Producer; clock?: Clock };

const units = (n: number): string => n.toLocaleString('en-US');

/**
 * `portal`: the service's public address, whose portal pages the e-mail links (a reader clicks, not
 * calls); `month`: the Lagos month whose statement (so far) it links.
 */
export function renderLowBalanceMail(portal: string, to: string[], organisation: string, balance: number, line: number, month: string): SealedMail {
  const text = [
    `The unit balance of ${organisation} is ${units(balance)} units, below the alert line of ${units(line)} units set for it.`,
    '',
    'Verifications stop with 402 once no unit is left: top up in the portal to keep them running:',
    `${portal}/portal/top-up`,
    '',
    `Where the units went this month: the statement for ${month}, in the portal:`,
    `${portal}/portal/history?statement=${month}`,
    '',
    `You will not hear of this again until the balance has been back at or above ${units(line)} units.`,
    '',
  ].join('\n');
  return { to: to.join(', '), subject: `Low balance: ${units(balance)} units left for ${organisation}`, text };
}

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
    return queueSealedMail(tx, deps.config.encryptionKeys, {
      kind: 'low_balance_email',
      dedupeKey: `low-balance-${orgId}-${randomUUID()}`,
      mail: renderLowBalanceMail(deps.config.publicBaseUrl, to, organisation, claimed.units, claimed.line, lagosMonthOf((deps.clock ?? systemClock).now())),
    });
  });
  if (outboxId === null) return false;
  deps.logger.info({ orgId, outboxId }, 'low-balance alert queued');
  await deliverSoon(deps.producer, outboxId, deps.logger, 'low-balance alert');
  return true;
}
