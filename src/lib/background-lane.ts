import type { RedisClient } from './redis.ts';

/**
 * Background work (batch feeding and bookkeeping, the settlement of asynchronous and batch lookups)
 * leaves interactive calls their latency on the machine it shares with them.
 *
 * The fair share guards the authority's slots; with a fast authority the limit is our own CPU
 * instead (the API, the workers, PostgreSQL and Redis on the same cores), and a batch that runs
 * flat out makes every synchronous verification of every organisation wait for CPU. So background
 * work is cut into steps (one batch row taken, one lookup settled, one lookup's end noted), and
 * each worker process lets them through a gate whose width follows the number of interactive
 * (synchronous) lookups in flight across every process: unlimited while there are none, `busyLimit`
 * steps at once (default 1) while there are any. The count is the fair share's own (admitted, not
 * yet settled), published on every change (`a:<n>` admitted, `f:<n>` settled), so the gate narrows
 * as an interactive lookup is admitted, before its job is even queued, and widens as the last one
 * settles: events and counts, no timer. A busy limit of at least one step means a steady stream of
 * interactive calls slows a batch but never stops it; a step already running is never interrupted.
 *
 * Pub/sub loses messages while a connection is down: the count is read again on every (re)connect
 * and whenever `refresh()` is called (the periodic batch feed does), and a stale count only ever
 * narrows the gate, never closes it.
 */
export type BackgroundLane = {
  /** Runs one background step when the gate lets it through. */
  run<T>(step: () => Promise<T>): Promise<T>;
  /** Interactive lookups in flight, as this process last heard. */
  readonly interactive: number;
  /** Steps waiting at the gate. */
  readonly waiting: number;
  /** Reads the count again (after a reconnect, or from the periodic feed). */
  refresh(): Promise<void>;
  close(): Promise<void>;
};

export function createBackgroundLane(o: { subscriber: RedisClient; channel: string; busyLimit: number; count: () => Promise<number> }): Promise<BackgroundLane> {
  let interactive = 0;
  let running = 0;
  const queue: (() => void)[] = [];
  const limit = () => (interactive > 0 ? Math.max(1, o.busyLimit) : Number.POSITIVE_INFINITY);
  const pump = () => {
    while (queue.length > 0 && running < limit()) {
      running++;
      queue.shift()!();
    }
  };
  const set = (n: number) => {
    interactive = Math.max(0, n);
    pump();
  };
  const onMessage = (channel: string, message: string) => {
    if (channel !== o.channel) return;
    const n = Number(message.slice(2));
    if (Number.isFinite(n)) set(n);
  };
  const refresh = async () => set(await o.count());
  const onReady = () => void refresh().catch(() => undefined);

  const lane: BackgroundLane = {
    async run(step) {
      if (running < limit() && queue.length === 0) running++;
      else await new Promise<void>((admit) => queue.push(admit));
      try {
        return await step();
      } finally {
        running--;
        pump();
      }
    },
    get interactive() {
      return interactive;
    },
    get waiting() {
      return queue.length;
    },
    refresh,
    async close() {
      o.subscriber.off('message', onMessage);
      o.subscriber.off('ready', onReady);
      await o.subscriber.quit().catch(() => o.subscriber.disconnect());
      // Nothing narrows the gate any more: whatever waits goes.
      interactive = 0;
      pump();
    },
  };
  return (async () => {
    o.subscriber.on('message', onMessage);
    await o.subscriber.subscribe(o.channel);
    // After the subscription: a change from here on is heard, the count read now covers the rest.
    await refresh();
    o.subscriber.on('ready', onReady);
    return lane;
  })();
}
