import { AsyncLocalStorage } from 'node:async_hooks';
import type { RequestHandler } from 'express';
import { Gauge, type Registry } from 'prom-client';
import { createPriorityGate } from './priority-gate.ts';

/**
 * Large requests (a selfie, a liveness check's frames) worked on a few at a time per process. Decoding,
 * checking, sealing and queuing one selfie costs the API several milliseconds of its one thread; 200
 * arriving at once used to take every turn of its event loop for a second or more, and every other
 * organisation's small request waited behind them (the face benchmark's bystanders: p95 15 ms alone,
 * 100-400 ms during such a burst). A request of these routes takes an intake slot once its body is read
 * (not before: a slow upload, which its client paces, must hold no slot) and gives it back as soon as
 * its heavy part is over: when it has queued its first job (then it only waits for a worker, see
 * jobs/producer.ts) or when it ends, however. Nothing is refused here: the routes' limits (rate limits,
 * the face cap) still answer, and the face workers are slower than the intake; it only spaces the work.
 */
export type Intake = { slot: RequestHandler };

const held = new AsyncLocalStorage<() => void>();

export function createIntake(o: { slots: number; registry: Registry; gauge: { name: string; help: string } }): Intake {
  const gate = createPriorityGate(o.slots);
  // Slots taken, and requests waiting for one: what an operator sizes the slots by.
  new Gauge({
    ...o.gauge,
    labelNames: ['state'] as const,
    registers: [o.registry],
    collect() {
      this.set({ state: 'taken' }, gate.inside);
      this.set({ state: 'waiting' }, gate.waiting);
    },
  });
  return {
    slot: (req, res, next) => {
      void gate.enter(0).then((leave) => {
        // Given back once, whichever comes first: the first job queued, or the response's end
        // (answered, refused or failed).
        res.once('close', leave);
        // The caller went away while it waited: nothing left to read or to answer.
        if (res.closed || req.socket.destroyed) return leave();
        held.run(leave, next);
      });
    },
  };
}

/** The request this code runs for has queued its work: its intake slot (if it holds one) goes back. */
export function leaveIntake(): void {
  held.getStore()?.();
}
