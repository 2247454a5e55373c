import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { recordWebhookEvent } from '../webhooks/index.ts';
import * as repo from './batches.repository.ts';

/**
 * `batch.completed`, `batch.paused`, `batch.cancelled` for the organisation's webhook endpoints, in the
 * transaction that changed the status (after the change, so the counts are the batch's at that moment).
 */
export async function reportBatchStatus(tx: CommonQueryMethods, batchId: string, status: 'completed' | 'paused' | 'cancelled', reason: string | null = null): Promise<void> {
  const b = await tx.one(sql.type(z.object({ org_id: z.coerce.number(), total: z.coerce.number(), invalid: z.coerce.number() }))`
    SELECT org_id, total, invalid FROM verification_batches WHERE id = ${batchId}`);
  const t = await repo.tally(tx, batchId);
  const data = { batch_id: batchId, status, counts: { rows: b.total, invalid: b.invalid, found: t.found, not_found: t.not_found, failed: t.failed, cancelled: t.cancelled, pending: t.pending } };
  if (status === 'paused') await recordWebhookEvent(tx, { orgId: b.org_id, type: 'batch.paused', data: { ...data, reason } });
  else await recordWebhookEvent(tx, { orgId: b.org_id, type: status === 'completed' ? 'batch.completed' : 'batch.cancelled', data });
}
