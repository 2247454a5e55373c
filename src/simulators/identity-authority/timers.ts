import type { Response } from 'express';

/**
 * Every pending delay of the simulator (latency, held calls), so close() can drop them all and the
 * process exits at once instead of waiting for the slowest one.
 */
export interface Timers {
  /** Runs fn after ms; the returned function cancels it. */
  later(ms: number, fn: () => void): () => void;
  /** Runs send after ms, or never if the client goes away first. */
  answerAfter(res: Response, ms: number, send: () => void): void;
  clearAll(): void;
}

export function createTimers(): Timers {
  const pending = new Set<NodeJS.Timeout>();

  function later(ms: number, fn: () => void): () => void {
    const t = setTimeout(() => {
      pending.delete(t);
      fn();
    }, ms);
    pending.add(t);
    return () => {
      clearTimeout(t);
      pending.delete(t);
    };
  }

  return {
    later,
    answerAfter(res, ms, send) {
      if (ms <= 0) return send();
      const cancel = later(ms, send);
      res.on('close', cancel);
    },
    clearAll() {
      for (const t of pending) clearTimeout(t);
      pending.clear();
    },
  };
}
