import type { RedisClient } from '../../lib/redis.ts';
import type { Clock } from '../../lib/clock.ts';

/**
 * Logged-out tokens, by jti, until they would have expired anyway. Redis rather than a table: each
 * entry deletes itself at the token's exp (no sweep), and every authenticated request already needs
 * Redis for its rate limits, so this adds no new way to fail. The price: an operator who empties
 * Redis revives logged-out tokens for the rest of their lifetime (at most JWT_TTL_SECONDS).
 */
export type Revocations = {
  revoke(jti: string, expiresAt: number): Promise<void>;
  isRevoked(jti: string): Promise<boolean>;
};

/** jti is a random UUID: the key carries nothing about the user. */
export const revokedKey = (prefix: string, jti: string) => `${prefix}:auth:revoked:${jti}`;

export function redisRevocations(redis: RedisClient, prefix: string, clock: Clock): Revocations {
  const key = (jti: string) => revokedKey(prefix, jti);
  return {
    async revoke(jti, expiresAt) {
      const ttl = Math.ceil(expiresAt - clock.now().getTime() / 1000);
      if (ttl > 0) await redis.set(key(jti), '1', 'EX', ttl);
    },
    async isRevoked(jti) {
      return (await redis.exists(key(jti))) === 1;
    },
  };
}
