import { Gauge, type Registry } from 'prom-client';
import type { DatabasePool } from 'slonik';
import { AppError } from '../../lib/errors.ts';
import * as repo from './batches.repository.ts';
import { viewOf } from './batches.service.ts';

/** `batch:show --id`: the batch as its organisation sees it, with the organisation it belongs to. */
export async function showBatch(db: DatabasePool, id: string) {
  const b = /^BAT-[A-Z0-9]{12}$/.test(id) ? await repo.findBatch(db, id) : null;
  if (!b) throw new AppError('not_found', 'Batch not found');
  const t = await repo.tally(db, b.id);
  return { ...viewOf(b, t), org_id: b.org_id, reason: b.reason, estimated_units: b.estimated_units, lookups_queued: t.queued_lookups, lookups_waiting: t.waiting_lookups };
}

/**
 * `verification_batches{status}` (open batches) and `verification_batch_rows_pending{status}` (their
 * rows not yet ended), read from PostgreSQL when Prometheus scrapes, like the queue depths.
 */
export function batchGauges(registry: Registry, db: DatabasePool): void {
  const gauge = (name: string, help: string, pick: (g: { batches: number; pending_rows: number } | undefined) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['status'] as const,
      registers: [registry],
      async collect() {
        try {
          const g = await repo.gauges(db);
          this.reset();
          for (const status of repo.OPEN_STATUSES) this.set({ status }, pick(g.find((x) => x.status === status)));
        } catch {
          // PostgreSQL out of reach: the series disappear rather than report stale counts.
          this.reset();
        }
      },
    });
  gauge('verification_batches', 'Open batches by status (queued, running, paused)', (g) => g?.batches ?? 0);
  gauge('verification_batch_rows_pending', 'Rows of open batches not yet ended, by batch status', (g) => g?.pending_rows ?? 0);
}
