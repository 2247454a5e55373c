import { defineScript, type RedisClient } from './redis.ts';

/**
 * A rate limit shared by every process that holds the same Redis key: each call reserves the next
 * free instant, and instants are at least `intervalMs` apart (GCRA with no burst, on Redis's clock).
 *
 * Why not a fixed window (BullMQ's queue rate limit, rate-limiter-flexible): a window that resets
 * on its edge lets up to twice the rate through across that edge, and the authority counts its own
 * one-second windows. Why not a queue-level limit at all: retries inside a job would bypass it.
 * Here every call to the authority, first try or retry, takes its own instant.
 */
export type CallSpacer = {
  /** Waits until this caller's reserved instant; resolves when it may call. */
  acquire(signal?: AbortSignal): Promise<void>;
  /** The authority asked everyone to wait: no instant is handed out before `ms` from now. */
  pause(ms: number): Promise<void>;
};

// KEYS[1]: the next free instant (ms, Redis clock). ARGV[1]: interval in ms (may be fractional).
// Returns how long the caller must wait before its instant.
const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
local start = math.max(tat, now)
local nextFree = start + interval
redis.call('SET', KEYS[1], tostring(nextFree), 'PX', math.ceil(nextFree - now) + 1000)
return math.ceil(start - now)
`;

// KEYS[1]: the next free instant. ARGV[1]: pause in ms. Never moves the instant backwards.
const PAUSE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local until_ = now + tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if until_ > tat then
  redis.call('SET', KEYS[1], tostring(until_), 'PX', tonumber(ARGV[1]) + 1000)
end
return 0
`;

// A call reserved this many milliseconds ahead or more is not worth a worker slot; the caller fails
// fast instead (nothing charged) and BullMQ or the client retries later.
export class SpacingBacklogError extends Error {
  readonly waitMs: number;
  constructor(waitMs: number) {
    super(`rate-limit backlog of ${waitMs} ms`);
    this.name = 'SpacingBacklogError';
    this.waitMs = waitMs;
  }
}

/**
 * `callsPerSecond` 0 turns spacing off, but an authority's pause still holds every caller (each call
 * then costs one Redis round trip, small beside an authority call). `margin` widens the interval a little so that network and
 * event-loop jitter between our clock and the authority's never lands one call too many in one of
 * its windows (5 % by default: 20/s spaces calls 52.5 ms apart, 19 calls a second).
 */
export function createCallSpacer(
  redis: RedisClient,
  o: { key: string; callsPerSecond: number; margin?: number; maxWaitMs?: number },
): CallSpacer {
  const interval = o.callsPerSecond > 0 ? (1000 / o.callsPerSecond) * (1 + (o.margin ?? 0.05)) : 0;
  const maxWaitMs = o.maxWaitMs ?? 60_000;
  const reserve = defineScript(redis, 'idvSpacerReserve', RESERVE);
  const pause = defineScript(redis, 'idvSpacerPause', PAUSE);
  return {
    async acquire(signal) {
      const wait = Number(await reserve(1, o.key, String(interval)));
      if (wait > maxWaitMs) throw new SpacingBacklogError(wait);
      if (wait > 0) await delay(wait, signal);
    },
    async pause(ms) {
      if (ms > 0) await pause(1, o.key, String(Math.ceil(ms)));
    },
  };
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
