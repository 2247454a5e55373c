import type { Config } from '../../config.ts';
import type { Producer } from '../../jobs/producer.ts';
import { openJson, sealJson, type KeyRing } from '../../lib/crypto.ts';
import type { RedisClient } from '../../lib/redis.ts';

/**
 * Where a batch's vNIN tokens wait until their lookup is queued: sealed, in one Redis hash per batch
 * (field: the lookup's index), never in PostgreSQL (README: vNIN). A token leaves the hash once its
 * job holds it; the hash goes when the batch ends or is cancelled, and expires by itself after a
 * vNIN's 72-hour validity, after which no token in it could be used anyway. The key names the batch
 * only: nothing personal in a key name.
 */
export type VninTokens = {
  keep(batchId: string, tokens: readonly { idx: number; vnin: string }[]): Promise<void>;
  /** The token of a waiting lookup, or null when it is gone (Redis lost it, or it expired). */
  take(batchId: string, idx: number): Promise<string | null>;
  /** The token is in its job now. */
  drop(batchId: string, idx: number): Promise<void>;
  /** The batch ended or was cancelled: whatever is left goes. */
  dropAll(batchId: string): Promise<void>;
};

export const VNIN_TOKEN_TTL_SECONDS = 72 * 3600;

const aad = (batchId: string, idx: number) => `batch-vnin:${batchId}:${idx}`;

export function vninTokens(redis: RedisClient, prefix: string, ring: KeyRing): VninTokens {
  const keyOf = (batchId: string) => `${prefix}:batch-vnin:${batchId}`;
  return {
    async keep(batchId, tokens) {
      if (tokens.length === 0) return;
      const fields: string[] = [];
      for (const t of tokens) {
        const s = sealJson(ring, t.vnin, aad(batchId, t.idx));
        fields.push(String(t.idx), `${s.keyId}.${s.data.toString('base64')}`);
      }
      await redis.multi().hset(keyOf(batchId), ...fields).expire(keyOf(batchId), VNIN_TOKEN_TTL_SECONDS).exec();
    },
    async take(batchId, idx) {
      const v = await redis.hget(keyOf(batchId), String(idx));
      if (!v) return null;
      const dot = v.indexOf('.');
      const keyId = v.slice(0, dot);
      const keys = ring.filter((k) => k.id === keyId);
      // Sealed under a key since removed from the ring, or not opening: as good as lost (the row
      // ends lookup_abandoned rather than stopping its whole batch).
      if (dot < 1 || keys.length === 0) return null;
      try {
        return openJson<string>(keys, { keyId, data: Buffer.from(v.slice(dot + 1), 'base64') }, aad(batchId, idx));
      } catch {
        return null;
      }
    },
    async drop(batchId, idx) {
      await redis.hdel(keyOf(batchId), String(idx));
    },
    async dropAll(batchId) {
      await redis.del(keyOf(batchId));
    },
  };
}

/** The batch tokens of this deployment: the producer's Redis connection, under the run's key prefix. */
export function tokensOf(deps: { producer: Pick<Producer, 'redis'>; config: Pick<Config, 'REDIS_PREFIX' | 'encryptionKeys'> }): VninTokens {
  return vninTokens(deps.producer.redis, deps.config.REDIS_PREFIX, deps.config.encryptionKeys);
}
