import type { DatabasePool } from 'slonik';
import { Gauge } from 'prom-client';
import { retiredKeyIds, type KeyRing, type SealedCount } from '../../lib/crypto.ts';
import type { Metrics } from '../../lib/metrics.ts';
import { resealMfaSecrets, sealedMfaCounts } from '../mfa/index.ts';
import { resealOutbox, sealedOutboxCounts } from '../mail/index.ts';
import { resealIdempotencyAnswers, resealVerifications, sealedVerificationCounts } from '../verification/index.ts';
import { resealWebhookSecrets, sealedWebhookCounts } from '../webhooks/index.ts';
import { resealSavedCards, sealedCardCounts } from '../topup/index.ts';

/**
 * Everything stored sealed with the encryption key ring, each by the module that owns its table.
 * A new sealed column gets a line here, so re-encryption and the gauge cannot forget it.
 */
const SEALED: readonly { table: string; reseal: (db: DatabasePool, ring: KeyRing, limit: number) => Promise<number> }[] = [
  { table: 'verifications', reseal: resealVerifications },
  { table: 'idempotency_keys', reseal: resealIdempotencyAnswers },
  { table: 'outbox', reseal: resealOutbox },
  { table: 'user_mfa', reseal: resealMfaSecrets },
  { table: 'webhook_endpoints', reseal: resealWebhookSecrets },
  { table: 'saved_cards', reseal: resealSavedCards },
];

export async function sealedRowCounts(db: DatabasePool, activeKeyId: string): Promise<SealedCount[]> {
  const parts = await Promise.all([
    sealedVerificationCounts(db, activeKeyId),
    sealedOutboxCounts(db, activeKeyId),
    sealedMfaCounts(db, activeKeyId),
    sealedWebhookCounts(db, activeKeyId),
    sealedCardCounts(db, activeKeyId),
  ]);
  return parts.flat();
}

/**
 * crypto:reencrypt: moves every sealed row to the active key, one committed batch at a time, so it
 * runs beside the service (each batch locks only its own rows, skipping rows locked by a request)
 * and a run cut short is simply started again. Answers what moved and what still is under another
 * key (rows locked at the time, or under a key no longer configured).
 */
export async function reencryptAll(db: DatabasePool, ring: KeyRing, batch: number, progress?: (table: string, moved: number) => void) {
  const moved: Record<string, number> = {};
  for (const t of SEALED) {
    moved[t.table] = 0;
    for (;;) {
      const n = await t.reseal(db, ring, batch);
      if (n === 0) break;
      moved[t.table]! += n;
      progress?.(t.table, moved[t.table]!);
    }
  }
  const remaining = await sealedRowCounts(db, ring[0]!.id);
  return { key_id: ring[0]!.id, moved, remaining };
}

/**
 * `sealed_rows{table, key_id}`: rows whose ciphertext each key other than the active one still
 * protects, counted on scrape. Only rows under other keys are read (partial indexes on key_id), so
 * the scrape stays cheap however many rows the active key protects; a retired key may leave
 * ENCRYPTION_KEYS once all its series read 0.
 */
export function collectSealedRows(metrics: Metrics, db: DatabasePool, ring: KeyRing): Gauge<'table' | 'key_id'> {
  return new Gauge({
    name: 'sealed_rows',
    help: 'Rows whose ciphertext each encryption key other than the active one still protects',
    labelNames: ['table', 'key_id'] as const,
    registers: [metrics.registry],
    async collect() {
      try {
        const counts = await sealedRowCounts(db, ring[0]!.id);
        this.reset();
        for (const t of SEALED) for (const key_id of retiredKeyIds(ring)) this.set({ table: t.table, key_id }, 0);
        for (const c of counts) this.set({ table: c.table, key_id: c.key_id }, c.rows);
      } catch {
        // PostgreSQL out of reach: no series rather than stale ones.
        this.reset();
      }
    },
  });
}
