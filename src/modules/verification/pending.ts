import { Gauge } from 'prom-client';
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { AppError } from '../../lib/errors.ts';
import type { Metrics } from '../../lib/metrics.ts';
import { DELIVERIES } from './verification.schemas.ts';

export const ORG_PENDING_CAP = 'Too many asynchronous and batch verifications are waiting for this organisation; nothing was charged, retry once some have ended';

/**
 * ORG_MAX_PENDING: asynchronous and batch verifications not yet ended, per organisation. The count
 * is `org_pending_rows`, kept by a trigger on `verifications` (every pending async or batch row
 * counts from its insert until its status leaves `pending`), so no path can forget it.
 */
function refuse(pending: number, adding: number, cap: number): never {
  throw new AppError('rate_limited', ORG_PENDING_CAP, {
    headers: { 'Retry-After': '60' },
    extra: { code: 'org_pending_cap', pending, limit: cap, requested: adding },
  });
}

const pendingRow = z.object({ pending: z.coerce.number() });

/**
 * For the transaction that has just inserted pending async or batch rows (the trigger counted them
 * and holds the counter row's lock until COMMIT): refuses the whole transaction with 429
 * `org_pending_cap` when the organisation is now past `cap`. Two transactions can never both pass:
 * the second waits for the first's lock and then sees its rows. The insert comes first so that the
 * wallet row (the unit hold) is always locked before the counter row, as a settlement does.
 */
export async function assertPendingWithinCap(tx: CommonQueryMethods, o: { orgId: number; cap: number; inserted: number }): Promise<void> {
  const row = await tx.maybeOne(sql.type(pendingRow)`SELECT pending FROM org_pending_rows WHERE org_id = ${o.orgId}`);
  const pending = row?.pending ?? 0;
  if (pending > o.cap) refuse(pending - o.inserted, o.inserted, o.cap);
}

/**
 * Reserves room for `n` rows before they are inserted (a batch is refused whole): locks the
 * organisation's counter row until the transaction ends and refuses with 429 `org_pending_cap` when
 * `n` more would pass `cap`. Insert the n rows (pending, delivery `async` or `batch`) in the same
 * transaction; the trigger counts them. Lock order: do not hold a wallet unit later in the same
 * transaction (a settlement locks the wallet row, then this one); insert-then-assertPendingWithinCap
 * is the form for rows that hold their unit as they are inserted.
 */
export async function reservePendingSlots(tx: CommonQueryMethods, o: { orgId: number; n: number; cap: number }): Promise<void> {
  const pending = await tx.oneFirst(sql.type(pendingRow)`
    INSERT INTO org_pending_rows (org_id, pending) VALUES (${o.orgId}, 0)
    ON CONFLICT (org_id) DO UPDATE SET pending = org_pending_rows.pending
    RETURNING pending`);
  if (pending + o.n > o.cap) refuse(pending, o.n, o.cap);
}

/** Rows not yet ended, for the pending gauge: by delivery, across every organisation. */
export async function pendingByDelivery(db: CommonQueryMethods): Promise<Map<string, number>> {
  const rows = await db.any(sql.type(z.object({ delivery: z.string(), n: z.coerce.number() }))`
    SELECT delivery, count(*) AS n FROM verifications WHERE status = 'pending' GROUP BY delivery`);
  return new Map(rows.map((r) => [r.delivery, r.n]));
}

/**
 * `verifications_pending{delivery}`: verifications not yet ended, by delivery (sync, async, batch),
 * read from PostgreSQL when Prometheus scrapes (an index-only count on the pending rows).
 */
export function registerPendingGauge(metrics: Metrics, db: CommonQueryMethods): void {
  new Gauge({
    name: 'verifications_pending',
    help: 'Verifications not yet ended, by delivery (async and batch ones wait out authority outages)',
    labelNames: ['delivery'] as const,
    registers: [metrics.registry],
    async collect() {
      try {
        const counts = await pendingByDelivery(db);
        for (const d of DELIVERIES) this.set({ delivery: d }, counts.get(d) ?? 0);
      } catch {
        // PostgreSQL out of reach: no figure rather than a stale one.
        this.reset();
      }
    },
  });
}
