import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import {
  BrokenCircuitError,
  CircuitState,
  SamplingBreaker,
  circuitBreaker,
  handleWhen,
  isBrokenCircuitError,
  type CircuitBreakerPolicy,
} from 'cockatiel';
import { UpstreamError } from './types.ts';

/**
 * A circuit breaker on the identity authority whose state every process shares. cockatiel does
 * the closed/open/half-open logic in each process; Redis only carries the outcomes: every real
 * call made through `execute` is published, and every process replays the other processes'
 * outcomes into its own policy. Fed the same stream, the policies open and close together, and
 * an API process (which never calls the authority) can refuse a live verification at once.
 */

/** Thrown by `execute` while the circuit is open, without calling the authority. */
export { BrokenCircuitError, isBrokenCircuitError };

export type BreakerState = 'closed' | 'open' | 'half_open';

export interface SharedBreakerOptions {
  /** Publishes outcomes and keeps the open-until key; owned by the caller. */
  redis: Redis | Cluster;
  /**
   * A connection of its own for SUBSCRIBE, owned and quit by the breaker. It must queue commands
   * until it is connected (a worker-style connection), or subscribing at start fails.
   */
  subscriber: Redis | Cluster;
  /** The channel and key are `<keyPrefix>:breaker:*`; they carry no personal data. */
  keyPrefix: string;
  /** Share of failed calls that opens the circuit (opens at >= threshold). */
  threshold?: number;
  /** Length of the sampling window. */
  windowMs?: number;
  /** Fewer calls than this in the window never open the circuit, whatever failed. */
  minimumCalls?: number;
  /** How long the circuit stays open before calls are let through as probes. */
  cooldownMs: number;
  /** Successful probes in a row that close the circuit; any failing probe reopens it. */
  probes?: number;
  /** Tells this process's outcomes from the others'; unique per breaker instance. */
  processId?: string;
  /** For metrics and logs: called on every transition, and with 'open' when starting open. */
  onStateChange?: (state: BreakerState) => void;
}

export interface SharedBreaker {
  /**
   * Runs one whole lookup (retries included: one record is one outcome). Rejects at once with a
   * BrokenCircuitError while open. Pass the caller's signal: a call it aborts counts for nothing.
   */
  execute<T>(fn: (signal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** True while the circuit is open and its cool-down has not passed: answer 503 without a job. */
  isOpen(): boolean;
  /**
   * For the API: should this live lookup be refused at once? While open, yes. Once the cool-down
   * has passed, `probes` lookups per open period go to the workers as probes and the rest are still
   * refused, so a half-open circuit does not flood the queue with calls the workers would refuse.
   */
  shouldRefuse(): boolean;
  /**
   * A lookup that shouldRefuse() let through never reached the authority (refused at admission, no
   * unit to hold, the queue unreachable): if it was one of this open period's probes, the probe is
   * given back. Otherwise callers that cannot pay could use up every probe, and with no lookup reaching
   * the authority the circuit would never close.
   */
  unusedProbe(): void;
  /** 'half_open' also once the cool-down has passed and the next call will be a probe. */
  state(): BreakerState;
  close(): Promise<void>;
}

/**
 * The authority is down or overloaded: 5xx, 408, a timeout or a network error. A 4xx says our
 * request is wrong, a 429 that we go too fast, not-found is an answer: none of them is an outage.
 */
export function isOutage(err: unknown): boolean {
  return err instanceof UpstreamError && err.retryable && err.status !== 429;
}

/** Another process's failed call, replayed into this process's policy. */
class ReplayedOutage extends Error {}

/** A call the caller aborted: it says nothing about the authority, so it is kept out of the count. */
class CallerAborted extends Error {}

type Outcome = { processId: string; ok: boolean };
type Settled<T> = { value: T } | { answered: UpstreamError };

const countsAsFailure = (err: unknown) => err instanceof ReplayedOutage || isOutage(err);

/**
 * cockatiel's SamplingBreaker keeps B = max(5, ceil(windowMs / 1000)) buckets of
 * L = round(windowMs / B) ms and, on each failure while closed (successes never trip it), opens
 * the circuit iff `total >= B * L * minimumRps / 1000` and `failures > threshold * total`, the
 * counts summed over its buckets. We pass a minimumRps that puts the volume bound at
 * minimumCalls - 0.5 and a threshold a hair (1e-9) under ours, so with whole counts the rule is
 * exactly: the failure that leaves failures >= threshold * total with total >= minimumCalls opens
 * it; by default at least 10 failures among at least 20 calls in the last 10 s. "The last 10 s"
 * holds while outcomes come at least once a bucket (1 s): the breaker moves on by one bucket per
 * outcome, so under sparser traffic older buckets linger and the window stretches further back.
 */
function samplingBreaker(threshold: number, windowMs: number, minimumCalls: number): SamplingBreaker {
  const buckets = Math.max(5, Math.ceil(windowMs / 1000));
  const span = Math.round(windowMs / buckets) * buckets;
  return new SamplingBreaker({
    threshold: threshold - 1e-9,
    duration: windowMs,
    minimumRps: ((minimumCalls - 0.5) * 1000) / span,
  });
}

function publicState(s: CircuitState): BreakerState {
  if (s === CircuitState.Closed) return 'closed';
  if (s === CircuitState.HalfOpen) return 'half_open';
  return 'open';
}

export async function createSharedBreaker(o: SharedBreakerOptions): Promise<SharedBreaker> {
  const threshold = o.threshold ?? 0.5;
  const windowMs = o.windowMs ?? 10_000;
  const minimumCalls = o.minimumCalls ?? 20;
  const probes = o.probes ?? 3;
  if (!(threshold > 0 && threshold < 1)) throw new RangeError('breaker: threshold must be in (0, 1)');
  if (!Number.isInteger(minimumCalls) || minimumCalls < 1) throw new RangeError('breaker: minimumCalls must be a positive integer');
  const processId = o.processId ?? randomUUID();
  const channel = `${o.keyPrefix}:breaker:outcomes`;
  const openKey = `${o.keyPrefix}:breaker:open-until`;
  let openUntil = 0;
  let closed = false;
  // Probes let through by shouldRefuse() in the half-open period that follows `probePeriod`.
  let probePeriod = 0;
  let probesLet = 0;

  // Subscribed before the saved state is read, so that no outcome falls between the two; those
  // that arrive meanwhile are replayed once the policy exists.
  let policyReady!: (p: CircuitBreakerPolicy) => void;
  const replay = replayer(new Promise((resolve) => (policyReady = resolve)));
  const onMessage = (ch: string, message: string) => {
    if (ch !== channel) return;
    const outcome = parseOutcome(message);
    if (outcome && outcome.processId !== processId) replay(outcome.ok);
  };
  o.subscriber.on('message', onMessage);
  await o.subscriber.subscribe(channel);

  // A process started while the circuit is open starts open for what is left of the cool-down,
  // then probes like the others. cockatiel's own toJSON()/initialState carry the open state
  // (isolate() would instead jump straight to closed when released, skipping the probes).
  const saved = await readSaved(o.redis, openKey);
  openUntil = saved?.until ?? 0;
  const p = circuitBreaker(handleWhen(countsAsFailure), {
    halfOpenAfter: o.cooldownMs,
    breaker: samplingBreaker(threshold, windowMs, minimumCalls),
    halfOpenSampling: { calls: probes, threshold: 0 },
    initialState: saved?.policy,
  });
  p.onBreak(() => {
    openUntil = Date.now() + o.cooldownMs;
    // Every process writes it on its own break: the same value, and any one of them suffices.
    o.redis
      .set(openKey, JSON.stringify({ until: openUntil, policy: p.toJSON() }), 'PX', o.cooldownMs)
      .catch(() => undefined);
  });
  p.onStateChange((s) => o.onStateChange?.(publicState(s)));
  policyReady(p);
  if (saved) o.onStateChange?.('open');

  // Lost outcomes (Redis away) only make the other processes' view lag; the call itself stands.
  const publish = (ok: boolean) => {
    if (closed) return;
    const outcome: Outcome = { processId, ok };
    o.redis.publish(channel, JSON.stringify(outcome)).catch(() => undefined);
  };

  return {
    async execute<T>(fn: (signal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T> {
      let settled: Settled<T>;
      try {
        settled = await p.execute(async ({ signal: s }): Promise<Settled<T>> => {
          try {
            return { value: await fn(s) };
          } catch (err) {
            if (signal?.aborted) throw new CallerAborted('aborted by the caller', { cause: err });
            // The authority answered, just not with a record: a healthy call for the breaker.
            if (err instanceof UpstreamError && !isOutage(err)) return { answered: err };
            throw err;
          }
        }, signal);
      } catch (err) {
        if (err instanceof CallerAborted) throw err.cause;
        if (isOutage(err)) publish(false);
        // Anything else (an open circuit, a fault of ours) is no outcome of the authority's. Note
        // that cockatiel counts such an error as a successful probe when half-open.
        throw err;
      }
      publish(true);
      if ('answered' in settled) throw settled.answered;
      return settled.value;
    },

    isOpen() {
      return p.state === CircuitState.Open && Date.now() < openUntil;
    },

    shouldRefuse() {
      if (p.state === CircuitState.Closed) return false;
      if (p.state === CircuitState.Open && Date.now() < openUntil) return true;
      if (probePeriod !== openUntil) {
        probePeriod = openUntil;
        probesLet = 0;
      }
      if (probesLet >= probes) return true;
      probesLet++;
      return false;
    },

    unusedProbe() {
      if (p.state !== CircuitState.Closed && probePeriod === openUntil && probesLet > 0) probesLet--;
    },

    state() {
      // cockatiel leaves Open only on the next call after the cool-down; until then it is half-open in effect.
      if (p.state === CircuitState.Open && Date.now() >= openUntil) return 'half_open';
      return publicState(p.state);
    },

    async close() {
      closed = true;
      o.subscriber.off('message', onMessage);
      await o.subscriber.quit().catch(() => o.subscriber.disconnect());
    },
  };
}

/**
 * Replays other processes' outcomes one after the other, each recorded before the next starts:
 * cockatiel records a thrown failure a few microtasks sooner than a success, so outcomes replayed
 * side by side would be counted out of order and the volume check would see too few calls.
 * While open, cockatiel rejects them (BrokenCircuitError), which is right: calls made just before
 * the break say nothing new. Once the cool-down has passed, a replayed outcome is a probe here too.
 */
function replayer(policy: Promise<CircuitBreakerPolicy>): (ok: boolean) => void {
  let queue: Promise<unknown> = policy;
  return (ok) => {
    queue = queue
      .then(async () =>
        (await policy).execute(() => {
          if (!ok) throw new ReplayedOutage();
        }),
      )
      .catch(() => undefined);
  };
}

function parseOutcome(message: string): Outcome | undefined {
  try {
    const v = JSON.parse(message) as Partial<Outcome>;
    return typeof v.processId === 'string' && typeof v.ok === 'boolean' ? { processId: v.processId, ok: v.ok } : undefined;
  } catch {
    return undefined;
  }
}

async function readSaved(redis: Redis | Cluster, key: string): Promise<{ until: number; policy: unknown } | undefined> {
  const raw = await redis.get(key).catch(() => null);
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw) as { until?: unknown; policy?: unknown };
    return typeof v.until === 'number' && v.until > Date.now() && v.policy ? { until: v.until, policy: v.policy } : undefined;
  } catch {
    return undefined;
  }
}
