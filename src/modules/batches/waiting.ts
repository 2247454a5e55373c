import { z } from 'zod';
import type { Config } from '../../config.ts';
import type { Producer } from '../../jobs/producer.ts';
import { openJson } from '../../lib/crypto.ts';
import type { LookupQuery } from '../verification/index.ts';
import type { BatchRow, WaitingLookup } from './batches.repository.ts';
import { tokensOf } from './vnin-tokens.ts';

/** The sealed identifier of a waiting lookup is bound to its batch and position. */
export const lookupAad = (batchId: string, idx: number) => `${batchId}:${idx}`;

const queryOf = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('nin'), value: z.string() }),
  z.object({ kind: z.literal('phone'), value: z.string() }),
  z.object({ kind: z.literal('vnin'), value: z.string() }),
]);

/**
 * A waiting lookup's query: a NIN or phone from its sealed copy in PostgreSQL; a vNIN from Redis,
 * where its token waits (PostgreSQL holds the token's keyed hash only), or that hash alone when the
 * token is gone.
 */
export async function queryOfWaiting(deps: { producer: Pick<Producer, 'redis'>; config: Config }, batch: BatchRow, w: WaitingLookup): Promise<LookupQuery> {
  const value = openJson<string>(deps.config.encryptionKeys.filter((k) => k.id === w.key_id), { keyId: w.key_id, data: w.query_enc }, lookupAad(batch.id, w.idx));
  const id = queryOf.parse({ kind: w.kind, value });
  switch (id.kind) {
    case 'nin':
      return { mode: 'nin', nin: id.value, reason: w.reason };
    case 'phone':
      return { mode: 'phone', phone: id.value, reason: w.reason };
    case 'vnin': {
      const token = await tokensOf(deps).take(batch.id, w.idx);
      return token ? { mode: 'vnin', vnin: token, reason: w.reason } : { mode: 'vnin', vninHash: id.value, reason: w.reason };
    }
  }
}
