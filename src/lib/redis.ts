import { Redis, type RedisOptions } from 'ioredis';

export type { Redis };

/**
 * The API's connection fails fast: with no offline queue a command issued while Redis is down
 * rejects at once, so a request answers 503 instead of hanging.
 */
export function createApiRedis(url: string, extra: RedisOptions = {}): Redis {
  return new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    lazyConnect: false,
    ...extra,
  });
}

/** Workers and blocking readers wait for Redis to come back, however long it takes. */
export function createWorkerRedis(url: string, extra: RedisOptions = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    ...extra,
  });
}
