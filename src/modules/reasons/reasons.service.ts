import { z } from 'zod';
import { DEFAULT_REASONS } from '../../adapters/identity-authority/reasons.ts';
import type { IdentityAuthority, Reason } from '../../adapters/identity-authority/types.ts';
import type { Config } from '../../config.ts';
import { AppError, describe } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Metrics } from '../../lib/metrics.ts';
import type { RedisClient } from '../../lib/redis.ts';

export type { Reason };

export type ReasonsDeps = {
  config: Config;
  identity: IdentityAuthority;
  redis: RedisClient;
  logger: Logger;
  metrics?: Metrics;
};

const reasonList = z.array(z.object({ key: z.string().min(1), label: z.string(), description: z.string() }));

// When the upstream list cannot be fetched, the built-in defaults are served for this long before
// the upstream is asked again: short, so a recovered upstream's full list shows up soon.
const FALLBACK_TTL_MS = 30_000;
// Requests are validated against this list, so fetching it must never hold one for long.
const FETCH_DEADLINE_MS = 2_000;

type Entry = { reasons: Reason[]; keys: Set<string>; expiresAt: number };
type Cache = { entry: Entry | null; inflight: Promise<Entry> | null };

// The in-process copy belongs to one app instance (its Redis client), never to the module.
const caches = new WeakMap<RedisClient, Cache>();

function cacheFor(redis: RedisClient): Cache {
  let c = caches.get(redis);
  if (!c) {
    c = { entry: null, inflight: null };
    caches.set(redis, c);
  }
  return c;
}

/** Upstream order first; the three keys requests are validated against are always present. */
export function mergeWithDefaults(upstream: readonly Reason[]): Reason[] {
  const seen = new Set<string>();
  const out: Reason[] = [];
  for (const r of [...upstream, ...DEFAULT_REASONS]) {
    if (seen.has(r.key)) continue;
    seen.add(r.key);
    out.push({ key: r.key, label: r.label, description: r.description });
  }
  return out;
}

function entryOf(reasons: Reason[], ttlMs: number): Entry {
  return { reasons, keys: new Set(reasons.map((r) => r.key)), expiresAt: Date.now() + ttlMs };
}

async function load(deps: ReasonsDeps, stale: Entry | null): Promise<Entry> {
  const key = `${deps.config.REDIS_PREFIX}:cache:reasons`;
  try {
    const [[, cached], [, pttl]] = (await deps.redis.multi().get(key).pttl(key).exec()) as [[unknown, string | null], [unknown, number]];
    if (cached) {
      const parsed = reasonList.safeParse(JSON.parse(cached));
      if (parsed.success && pttl > 0) return entryOf(mergeWithDefaults(parsed.data), pttl);
    }
  } catch (err) {
    // Redis down: the API still answers from the upstream or the defaults.
    deps.logger.warn({ err: describe(err) }, 'reasons cache unreadable');
  }

  const started = process.hrtime.bigint();
  try {
    const deadline = AbortSignal.timeout(Math.min(deps.config.IDENTITY_TIMEOUT_MS, FETCH_DEADLINE_MS));
    const upstream = reasonList.parse(await deps.identity.listReasons(deadline));
    deps.metrics?.upstreamDuration.observe(
      { dialect: deps.config.IDENTITY_DIALECT, operation: 'reasons', outcome: 'found' },
      Number(process.hrtime.bigint() - started) / 1e9,
    );
    const reasons = mergeWithDefaults(upstream);
    deps.redis.set(key, JSON.stringify(reasons), 'EX', deps.config.REASONS_CACHE_SECONDS).catch((err: unknown) => {
      deps.logger.warn({ err: describe(err) }, 'reasons cache not written');
    });
    return entryOf(reasons, deps.config.REASONS_CACHE_SECONDS * 1000);
  } catch (err) {
    deps.metrics?.upstreamDuration.observe(
      { dialect: deps.config.IDENTITY_DIALECT, operation: 'reasons', outcome: 'error' },
      Number(process.hrtime.bigint() - started) / 1e9,
    );
    deps.logger.warn({ err: describe(err) }, 'reasons list unavailable upstream; serving the last known list');
    // A list that once came from the upstream is better than the defaults alone.
    return entryOf(stale?.reasons ?? mergeWithDefaults([]), FALLBACK_TTL_MS);
  }
}

async function current(deps: ReasonsDeps): Promise<Entry> {
  const cache = cacheFor(deps.redis);
  const entry = cache.entry;
  if (entry && entry.expiresAt > Date.now()) return entry;
  // One refresh at a time per process: a burst of requests on an expired cache asks once.
  cache.inflight ??= load(deps, entry).then(
    (e) => {
      cache.entry = e;
      cache.inflight = null;
      return e;
    },
    (err: unknown) => {
      cache.inflight = null;
      throw err;
    },
  );
  // Only the very first request of a process waits for the list; later ones are answered from
  // the previous copy while it is refreshed.
  if (entry) {
    cache.inflight.catch(() => undefined);
    return entry;
  }
  return cache.inflight;
}

export async function listReasons(deps: ReasonsDeps): Promise<Reason[]> {
  return (await current(deps)).reasons.map((r) => ({ ...r }));
}

/** 400 unless `reason` is a key of the reasons list (the key, not the label). */
export async function requireKnownReason(deps: ReasonsDeps, reason: string): Promise<void> {
  const entry = await current(deps);
  if (!entry.keys.has(reason)) {
    throw new AppError('bad_request', 'Invalid reason: use a key from GET /v1/nimc-reasons');
  }
}
