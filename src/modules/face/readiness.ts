import type { RedisClient } from '../../lib/redis.ts';

/**
 * A face worker says it is ready (its model loaded, taking jobs) by renewing this key; it lapses
 * READY_TTL_MS after the last worker stopped renewing it. The API's /readyz reads it: without a face
 * worker, face matches answer 503 after FACE_WAIT_MS, while everything else works.
 */
const READY_TTL_MS = 30_000;
export const READY_RENEW_MS = 10_000;

const readyKey = (prefix: string) => `${prefix}:face:ready`;

export async function markFaceReady(redis: RedisClient, prefix: string): Promise<void> {
  await redis.set(readyKey(prefix), String(process.pid), 'PX', READY_TTL_MS);
}

export async function faceReadiness(redis: RedisClient, prefix: string): Promise<'ready' | 'no_worker'> {
  return (await redis.exists(readyKey(prefix))) === 1 ? 'ready' : 'no_worker';
}
