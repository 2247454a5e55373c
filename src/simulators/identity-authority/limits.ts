/**
 * The authority's per-API-key limits: calls per second and calls in flight. A call is admitted
 * only when both allow it; a refused call consumes neither, so "accepted" means exactly the calls
 * the counters report per second.
 */
export type RateWindow = 'bucket' | 'sliding';

export interface LimitSettings {
  /** Calls admitted per second per key; 0 means no limit. */
  rateLimit: number;
  /**
   * `bucket`: at most rateLimit calls per epoch second (Math.floor(ms / 1000)), the same buckets
   * stats() reports. `sliding`: at most rateLimit in any 1000 ms, which also keeps every bucket
   * within the limit but refuses bursts straddling a second boundary.
   */
  rateWindow: RateWindow;
  /** Calls in flight per key; 0 means no cap. */
  maxConcurrency: number;
}

export type Admission =
  | { ok: true; release: () => void }
  | { ok: false; reason: 'rate' | 'concurrency'; retryAfterSeconds: number };

interface KeyState {
  inFlight: number;
  second: number;
  inSecond: number;
  /** Admission times within the last second, oldest first. */
  recent: number[];
}

export interface Limits {
  admit(key: string, now: number): Admission;
}

export function createLimits(settings: () => LimitSettings): Limits {
  const keys = new Map<string, KeyState>();

  function stateOf(key: string): KeyState {
    let s = keys.get(key);
    if (!s) {
      s = { inFlight: 0, second: 0, inSecond: 0, recent: [] };
      keys.set(key, s);
    }
    return s;
  }

  /** Seconds until a call would fit the rate window again; 0 when it fits now. */
  function rateWait(s: KeyState, now: number, cfg: LimitSettings): number {
    if (cfg.rateLimit <= 0) return 0;
    if (cfg.rateWindow === 'bucket') {
      const second = Math.floor(now / 1000);
      if (s.second !== second || s.inSecond < cfg.rateLimit) return 0;
      return Math.max(1, Math.ceil(((second + 1) * 1000 - now) / 1000));
    }
    if (s.recent.length < cfg.rateLimit) return 0;
    const freeAt = (s.recent[s.recent.length - cfg.rateLimit] ?? now) + 1000;
    return Math.max(1, Math.ceil((freeAt - now) / 1000));
  }

  return {
    admit(key, now) {
      const cfg = settings();
      const s = stateOf(key);
      while (s.recent.length > 0 && (s.recent[0] ?? 0) <= now - 1000) s.recent.shift();
      if (cfg.maxConcurrency > 0 && s.inFlight >= cfg.maxConcurrency) {
        return { ok: false, reason: 'concurrency', retryAfterSeconds: 1 };
      }
      const wait = rateWait(s, now, cfg);
      if (wait > 0) return { ok: false, reason: 'rate', retryAfterSeconds: wait };

      const second = Math.floor(now / 1000);
      if (s.second !== second) {
        s.second = second;
        s.inSecond = 0;
      }
      s.inSecond += 1;
      // Kept in both windows so that switching to `sliding` at run time starts with the truth.
      if (cfg.rateLimit > 0) s.recent.push(now);
      s.inFlight += 1;
      let released = false;
      return {
        ok: true,
        release: () => {
          if (released) return;
          released = true;
          s.inFlight -= 1;
        },
      };
    },
  };
}
