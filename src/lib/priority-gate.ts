/**
 * At most `limit` holders at once; waiters are let in by priority (lower first), then by arrival,
 * the order BullMQ hands out prioritised jobs. An in-process stand-in for the queue's global
 * concurrency, for code that runs a job where it was asked for instead of through the queue.
 */
export type PriorityGate = {
  /** Resolves once admitted; the returned function lets the next waiter in (call it exactly once). */
  enter(priority: number): Promise<() => void>;
  readonly waiting: number;
  /** How many hold it now. */
  readonly inside: number;
};

export function createPriorityGate(limit: number): PriorityGate {
  let inside = 0;
  // Sorted by priority, arrivals in order within one priority; waiters are few (bounded by the callers in flight), so an ordered insert is cheap.
  const queue: { priority: number; admit: () => void }[] = [];
  const leave = () => {
    inside--;
    const next = queue.shift();
    if (next) {
      inside++;
      next.admit();
    }
  };
  const ticket = () => {
    let left = false;
    return () => {
      if (left) return;
      left = true;
      leave();
    };
  };
  return {
    get waiting() {
      return queue.length;
    },
    get inside() {
      return inside;
    },
    enter(priority) {
      if (inside < limit) {
        inside++;
        return Promise.resolve(ticket());
      }
      return new Promise((resolve) => {
        const entry = { priority, admit: () => resolve(ticket()) };
        let i = queue.length;
        while (i > 0 && queue[i - 1]!.priority > priority) i--;
        queue.splice(i, 0, entry);
      });
    },
  };
}
