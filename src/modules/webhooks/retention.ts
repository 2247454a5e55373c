import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import type { Clock } from '../../lib/clock.ts';

/** What the retention job needs; WorkerDeps provides it. */
export type WebhookRetentionDeps = { db: DatabasePool; config: Pick<Config, 'WEBHOOK_RETENTION_DAYS'>; clock: Clock };

// Events removed per statement, and statements per run: a bounded sweep (at most 50,000 events an
// hour on the hourly RETENTION_CRON), short statements that never hold many row locks for long.
const PAGE = 1000;
const MAX_PAGES = 50;

/**
 * `webhooks.prune`: webhook events older than WEBHOOK_RETENTION_DAYS go, with every delivery of
 * theirs, once none of those deliveries is pending and none was made inside the window (a recent
 * redelivery keeps its event, and the log shows it). It cannot race the dispatcher: a pending delivery
 * keeps its event, and the window is longer than the retry window, so nothing still tried is old
 * enough. An event row a redelivery is being written for is locked (the foreign key's share lock) and
 * skipped; one written between this statement's snapshot and its lock makes the statement fail on the
 * foreign key, and the next run tries again. Bodies carry no personal data; this keeps the tables small.
 */
export async function pruneWebhookHistory(deps: WebhookRetentionDeps): Promise<{ events: number; deliveries: number }> {
  const cutoff = new Date(deps.clock.now().getTime() - deps.config.WEBHOOK_RETENTION_DAYS * 24 * 3600 * 1000);
  let events = 0;
  let deliveries = 0;
  for (let page = 0; page < MAX_PAGES; page++) {
    // One statement: the deliveries and their events go together (the foreign keys are checked at
    // its end), so no event is ever left without the deliveries the log would show, nor the reverse.
    const r = await deps.db.one(sql.type(z.object({ events: z.coerce.number(), deliveries: z.coerce.number() }))`
      WITH old AS (
        SELECT ev.id FROM webhook_events ev
        WHERE ev.created_at < ${cutoff.toISOString()}::timestamptz
          AND NOT EXISTS (
            SELECT 1 FROM webhook_deliveries d
            WHERE d.event_id = ev.id AND (d.status = 'pending' OR d.created_at >= ${cutoff.toISOString()}::timestamptz))
        ORDER BY ev.created_at
        LIMIT ${PAGE}
        FOR UPDATE SKIP LOCKED
      ), gone_deliveries AS (
        DELETE FROM webhook_deliveries d USING old WHERE d.event_id = old.id RETURNING d.id
      ), gone_events AS (
        DELETE FROM webhook_events ev USING old WHERE ev.id = old.id RETURNING ev.id
      )
      SELECT (SELECT count(*) FROM gone_events) AS events, (SELECT count(*) FROM gone_deliveries) AS deliveries`);
    events += r.events;
    deliveries += r.deliveries;
    if (r.events < PAGE) break;
  }
  return { events, deliveries };
}
