import type { Response } from 'express';
import type { Timers } from './timers.ts';

/**
 * The authority's bad hours, switched on for a period: `503` answers every lookup with 503 at
 * once; `hang` holds every lookup without an answer until the period ends, then answers 504, the
 * way a gateway in front of a stuck backend does.
 */
export type OutageMode = 'none' | '503' | 'hang';

export interface OutageState {
  mode: OutageMode;
  /** Epoch ms when it ends; null when there is none. */
  until: number | null;
}

export interface Outage {
  start(mode: OutageMode, forMs: number, now: number): OutageState;
  current(now: number): OutageState;
  /** Keeps the call unanswered until the hang ends (or the client leaves), then sends `timeout`. */
  hold(res: Response, timeout: () => void): void;
  /** Ends a hang now: held calls get their 504. */
  end(): void;
}

export function createOutage(timers: Timers): Outage {
  let state: OutageState = { mode: 'none', until: null };
  // Each held call with its 504, written in the dialect it was asked in.
  const held = new Map<Response, () => void>();
  let cancelTimer: (() => void) | undefined;

  function releaseHeld(): void {
    for (const [res, timeout] of held) {
      if (!res.headersSent) timeout();
    }
    held.clear();
  }

  function end(): void {
    cancelTimer?.();
    cancelTimer = undefined;
    state = { mode: 'none', until: null };
    releaseHeld();
  }

  return {
    start(mode, forMs, now) {
      // A hang replaced by a hang keeps its held calls to the new end; anything else lets them go.
      cancelTimer?.();
      cancelTimer = undefined;
      if (mode !== 'hang') releaseHeld();
      if (mode === 'none') {
        state = { mode: 'none', until: null };
        return state;
      }
      state = { mode, until: now + forMs };
      cancelTimer = timers.later(forMs, end);
      return state;
    },
    current(now) {
      if (state.until !== null && now >= state.until) end();
      return state;
    },
    hold(res, timeout) {
      held.set(res, timeout);
      res.on('close', () => held.delete(res));
    },
    end,
  };
}
