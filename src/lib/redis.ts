import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { describe } from './errors.ts';
import type { Logger } from './logger.ts';

/**
 * One Redis server or a Redis Cluster: the same commands either way. On a cluster every command
 * that names several keys (a Lua script, a BullMQ operation) must keep them in one hash slot,
 * which is why queue and authority keys carry hash tags.
 */
export type RedisClient = Redis | Cluster;

/** Where Redis is: `url` alone for one server; with `clusterNodes`, the cluster's seed nodes. */
export type RedisTarget = { url: string; clusterNodes: readonly string[] };

export function redisTarget(config: { REDIS_URL: string; REDIS_CLUSTER_NODES: readonly string[] }): RedisTarget {
  return { url: config.REDIS_URL, clusterNodes: config.REDIS_CLUSTER_NODES };
}

/** `unix:///run/redis/redis.sock` (with `?db=N` if wanted): ioredis takes a socket as a plain path. */
export function connectionString(url: string): string {
  return url.startsWith('unix://') ? url.slice('unix://'.length) : url;
}

/**
 * The API's connection fails fast: with no offline queue a command issued while Redis is down
 * rejects at once, so a request answers 503 instead of hanging.
 */
export function createApiRedis(target: RedisTarget, extra: RedisOptions = {}): RedisClient {
  const options: RedisOptions = { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, lazyConnect: false, ...extra };
  if (target.clusterNodes.length === 0) return new Redis(connectionString(target.url), options);
  return createCluster(target, options, { enableOfflineQueue: false });
}

/** Workers and blocking readers wait for Redis to come back, however long it takes. */
export function createWorkerRedis(target: RedisTarget, extra: RedisOptions = {}): RedisClient {
  const options: RedisOptions = { maxRetriesPerRequest: null, enableReadyCheck: true, ...extra };
  if (target.clusterNodes.length === 0) return new Redis(connectionString(target.url), options);
  return createCluster(target, options, { enableOfflineQueue: true });
}

/**
 * Says through the process's logger when a connection fails and when it is back, once per outage:
 * ioredis retries by itself, and with no 'error' listener it prints every failed attempt to stderr,
 * unstructured. For the connections this process uses itself (BullMQ listens on its own).
 */
export function reportConnection(client: RedisClient, logger: Logger, connection: string): RedisClient {
  let down = false;
  client.on('error', (err: unknown) => {
    if (!down) logger.warn({ connection, err: describe(err) }, 'Redis connection failed: retrying');
    down = true;
  });
  client.on('ready', () => {
    if (down) logger.info({ connection }, 'Redis connection back');
    down = false;
  });
  return client;
}

/**
 * The cluster client reaches nodes it learns from the seeds, so credentials and TLS go to every
 * node through `redisOptions`; they come from REDIS_URL, whose host and port are not used.
 */
function createCluster(target: RedisTarget, options: RedisOptions, clusterOptions: ClusterOptions): Cluster {
  const url = new URL(target.url);
  const nodes = target.clusterNodes.map((n) => {
    const colon = n.lastIndexOf(':');
    return { host: n.slice(0, colon).replace(/^\[|\]$/g, ''), port: Number(n.slice(colon + 1)) };
  });
  const redisOptions: RedisOptions = {
    ...options,
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  };
  return new Cluster(nodes, { ...clusterOptions, enableReadyCheck: true, redisOptions });
}

/** A Lua script called with its number of keys, then the keys, then its arguments. */
export type RedisScript = (numberOfKeys: number, ...args: (string | number)[]) => Promise<unknown>;

/**
 * A Lua script run by its SHA1 (EVALSHA; ioredis sends the body once, when Redis answers NOSCRIPT),
 * instead of EVAL, which sends the whole body and has Redis hash it on every call: the scripts on a
 * lookup's path run several times per lookup. `name` must be unique per script.
 */
export function defineScript(redis: RedisClient, name: string, lua: string): RedisScript {
  redis.defineCommand(name, { lua });
  const command = (redis as unknown as Record<string, (...args: (string | number)[]) => Promise<unknown>>)[name]!;
  return (numberOfKeys, ...args) => command.call(redis, numberOfKeys, ...args);
}
