/**
 * What the simulator saw, for tests and benchmarks. Calls are bucketed by epoch second
 * (Math.floor(ms / 1000)), the same buckets the rate limit's `bucket` window uses, so "at most N
 * accepted in every second" can be checked against the numbers here.
 */
export interface SecondBucket {
  /** Epoch second. */
  second: number;
  /** Every call received in that second. */
  received: number;
  /** Lookups admitted past outages and limits. */
  accepted: number;
  /** Lookups refused with 429 by the rate limit or the concurrency cap. */
  limited: number;
}

export interface SimStats {
  /** Every request to the authority API, whatever its answer (control calls excluded). */
  calls: number;
  /** Lookups admitted past outages and limits. */
  accepted: number;
  /** Admitted lookups not answered yet. */
  inFlight: number;
  /** Most admitted lookups in flight at once since the start or the last reset. */
  peakConcurrency: number;
  /** 429s from the rate limit. */
  rateLimited: number;
  /** 429s from the concurrency cap. */
  concurrencyLimited: number;
  /** 503s from a `503` outage. */
  outage503: number;
  /** Lookups held by a `hang` outage. */
  outageHeld: number;
  /** Answers sent, by HTTP status (fault NINs included); calls the client gave up on are not answers. */
  statuses: Record<string, number>;
  /** Oldest first; seconds with no call are left out. */
  seconds: SecondBucket[];
}

// A day of seconds: a long benchmark keeps its whole history, a forgotten process stays small.
const MAX_SECONDS = 86_400;

export interface StatsRecorder {
  received(now: number): void;
  accepted(now: number): void;
  released(): void;
  limited(now: number, reason: 'rate' | 'concurrency'): void;
  outage(kind: '503' | 'hang'): void;
  answered(status: number): void;
  snapshot(): SimStats;
  reset(): void;
}

export function createStatsRecorder(): StatsRecorder {
  let calls = 0;
  let accepted = 0;
  let inFlight = 0;
  let peak = 0;
  let rateLimited = 0;
  let concurrencyLimited = 0;
  let outage503 = 0;
  let outageHeld = 0;
  let statuses = new Map<number, number>();
  let seconds = new Map<number, SecondBucket>();

  function bucket(now: number): SecondBucket {
    const second = Math.floor(now / 1000);
    let b = seconds.get(second);
    if (!b) {
      b = { second, received: 0, accepted: 0, limited: 0 };
      seconds.set(second, b);
      if (seconds.size > MAX_SECONDS) {
        const oldest = seconds.keys().next().value;
        if (oldest !== undefined) seconds.delete(oldest);
      }
    }
    return b;
  }

  return {
    received(now) {
      calls += 1;
      bucket(now).received += 1;
    },
    accepted(now) {
      accepted += 1;
      bucket(now).accepted += 1;
      inFlight += 1;
      peak = Math.max(peak, inFlight);
    },
    released() {
      inFlight -= 1;
    },
    limited(now, reason) {
      if (reason === 'rate') rateLimited += 1;
      else concurrencyLimited += 1;
      bucket(now).limited += 1;
    },
    outage(kind) {
      if (kind === '503') outage503 += 1;
      else outageHeld += 1;
    },
    answered(status) {
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    },
    snapshot() {
      return {
        calls,
        accepted,
        inFlight,
        peakConcurrency: peak,
        rateLimited,
        concurrencyLimited,
        outage503,
        outageHeld,
        statuses: Object.fromEntries([...statuses].sort(([a], [b]) => a - b).map(([k, v]) => [String(k), v])),
        seconds: [...seconds.values()].sort((a, b) => a.second - b.second).map((b) => ({ ...b })),
      };
    },
    reset() {
      calls = 0;
      accepted = 0;
      // Calls in flight stay in flight: the peak restarts from them.
      peak = inFlight;
      rateLimited = 0;
      concurrencyLimited = 0;
      outage503 = 0;
      outageHeld = 0;
      statuses = new Map();
      seconds = new Map();
    },
  };
}
