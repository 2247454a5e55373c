import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import type { Producer } from '../../jobs/producer.ts';
import type { Clock } from '../../lib/clock.ts';
import { lagosMonth, previousLagosMonth } from '../../lib/lagos-month.ts';
import type { Logger } from '../../lib/logger.ts';
import { deliverSoon, queueMail } from '../mail/index.ts';
import { financeOfficers, type FinanceOfficer } from '../organisations/index.ts';

export type MonthlyMailDeps = { db: DatabasePool; config: Config; clock: Clock; producer?: Producer };

// Officers read per page: a run's reads stay bounded however many organisations there are.
const PAGE = 200;

/** The officers of a page who were not yet sent this month's statement e-mail. */
async function notYetSent(db: CommonQueryMethods, page: readonly FinanceOfficer[], month: string): Promise<FinanceOfficer[]> {
  if (page.length === 0) return [];
  const sent = new Set(
    await db.anyFirst(sql.type(z.object({ user_id: z.coerce.number() }))`
      SELECT user_id FROM statement_mails WHERE month = ${month} AND user_id = ANY(${sql.array(page.map((o) => o.user_id), 'int8')})`),
  );
  return page.filter((o) => !sent.has(o.user_id));
}

/**
 * Queues one e-mail to every finance officer for the Lagos month that has ended, each linking that
 * month's statement in the portal. Runs daily (STATEMENT_MAIL_CRON): the first run of a month sends,
 * later runs find everyone sent and send nothing, and a missed day is caught up the next. The row in
 * statement_mails (primary key: user and month) and the outbox row commit together, so a retry, a
 * second worker or an overlapping run never sends a second e-mail.
 */
export async function mailMonthlyStatements(deps: MonthlyMailDeps, log: Logger): Promise<{ month: string; queued: number }> {
  const month = previousLagosMonth(deps.clock.now());
  const { before } = lagosMonth(month);
  const queued: number[] = [];
  for (let after = 0; ; ) {
    const page = await financeOfficers(deps.db, { before, afterUserId: after, limit: PAGE });
    for (const officer of await notYetSent(deps.db, page, month)) {
      const outboxId = await deps.db.transaction(async (tx) => {
        // The claim first: a concurrent run's insert waits for this one to commit, then does nothing.
        const claimed = await tx.maybeOneFirst(sql.type(z.object({ user_id: z.coerce.number() }))`
          INSERT INTO statement_mails (user_id, month, org_id) VALUES (${officer.user_id}, ${month}, ${officer.org_id})
          ON CONFLICT (user_id, month) DO NOTHING
          RETURNING user_id`);
        if (claimed === null) return null;
        const id = await queueMail(tx, deps.config, {
          dedupeKey: `statement-${officer.user_id}-${month}`,
          to: officer.email,
          message: { template: 'statement', data: { organisation: officer.organisation, month } },
        });
        await tx.query(sql.unsafe`UPDATE statement_mails SET outbox_id = ${id} WHERE user_id = ${officer.user_id} AND month = ${month}`);
        return id;
      });
      if (outboxId !== null) queued.push(outboxId);
    }
    if (page.length < PAGE) break;
    after = page[page.length - 1]!.user_id;
  }
  for (const outboxId of queued) await deliverSoon(deps.producer, outboxId, log, 'statement e-mail');
  if (queued.length > 0) log.info({ month, queued: queued.length }, 'monthly statement e-mails queued');
  return { month, queued: queued.length };
}
