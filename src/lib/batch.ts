import { AsyncLocalStorage } from 'node:async_hooks';
import { outsideAnyRequest } from './request-scope.ts';

export type BatchOptions<I, O> = {
  /** One statement for the batch: one result per item, in the items' order. */
  run(items: I[]): Promise<readonly O[]>;
  maxBatch: number;
  /**
   * Which failures of a batch of several may be one item's fault: those run the items again, each
   * alone (up to RETRIES_AT_ONCE at a time), so that fault is its own caller's alone. Only for
   * failures that committed nothing (a retry of a batch that did commit would write its items twice).
   */
  retryOneByOne?: (err: unknown) => boolean;
};

// One statement under way per batcher, so that the items arriving meanwhile share the next; one that
// is still under way after SLOW_MS (a connection lost without a reset, a database that stopped
// answering) no longer holds the others back: another starts beside it, up to MAX_IN_FLIGHT.
const SLOW_MS = 100;
const MAX_IN_FLIGHT = 4;
// A failed batch's items run again each alone, this many at a time: one item's wait (a lock) does
// not hold the others, and a large batch does not take every connection of the pool.
const RETRIES_AT_ONCE = 4;

/**
 * Items that arrive together, one statement: while a statement is under way, the items that arrive
 * wait and are run together by the next (up to `maxBatch`). One statement for many callers is one
 * round trip, one parse of its answer and one wake-up of a database backend for all of them. Every
 * item is run by a statement that starts after it arrived. The statements run in the batcher's own
 * async context, not in that of the caller that happened to start them (slonik refuses a pool query
 * made inside a transaction's context).
 */
export function batcher<I, O>(o: BatchOptions<I, O>): (item: I) => Promise<O> {
  type Waiting = { item: I; resolve(v: O): void; reject(err: unknown): void };
  const waiting: Waiting[] = [];
  let inFlight = 0;
  // Of those, the ones whose statement has been under way longer than SLOW_MS.
  let slow = 0;
  // A new statement may start when none is under way, or when every one under way is slow.
  const mayStart = () => inFlight === slow && inFlight < MAX_IN_FLIGHT;
  // Taken outside any request's scope: the audit and fixture writers are made by the first request
  // that writes, and their context would otherwise keep that request (its body) for good.
  const inOwnContext = outsideAnyRequest(() => AsyncLocalStorage.snapshot());
  const start = () => {
    inFlight++;
    inOwnContext(() => void drain());
  };
  // A predicate that throws counts as "no": the batch's callers still hear of its failure.
  const retriable = (err: unknown) => {
    try {
      return o.retryOneByOne?.(err) === true;
    } catch {
      return false;
    }
  };
  const runBatch = async (batch: Waiting[]) => {
    try {
      const results = await o.run(batch.map((w) => w.item));
      if (results.length !== batch.length) throw new Error(`batch: ${batch.length} items run, ${results.length} results`);
      batch.forEach((w, i) => w.resolve(results[i]!));
    } catch (err) {
      if (batch.length === 1 || !retriable(err)) for (const w of batch) w.reject(err);
      else {
        const left = [...batch];
        const retry = async () => {
          for (let w = left.shift(); w; w = left.shift()) await runBatch([w]);
        };
        await Promise.all(Array.from({ length: Math.min(RETRIES_AT_ONCE, left.length) }, retry));
      }
    }
  };
  const drain = async () => {
    try {
      while (waiting.length > 0) {
        const batch = waiting.splice(0, o.maxBatch);
        let late = false;
        const timer = setTimeout(() => {
          late = true;
          slow++;
          if (waiting.length > 0 && mayStart()) start();
        }, SLOW_MS);
        timer.unref();
        try {
          await runBatch(batch);
        } finally {
          clearTimeout(timer);
          if (late) slow--;
        }
      }
    } finally {
      inFlight--;
    }
  };
  return (item) =>
    new Promise<O>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      if (mayStart()) start();
    });
}
