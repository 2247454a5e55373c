import type { BackgroundLane } from '../../context.ts';
import type { RedisClient } from '../../lib/redis.ts';

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
 * Steps already running are not the only cost: a batch keeps up to BATCH_QUEUE_DEPTH lookups queued,
 * and those run whatever the gate says (a lookup waiting for a step would hold an authority slot).
 * So the lane is also `busy` while interactive lookups come and go: from any interactive event heard
 * (an admission, a settlement) until `quietMs` pass with none in flight. A stream of synchronous calls
 * (5 a second, each in flight a tenth of the time) keeps it busy throughout, and the feeder keeps a
 * batch's queue shallow meanwhile (BATCH_QUEUE_DEPTH_WHILE_INTERACTIVE). This is a scheduling hint, not
 * a rule anything correct depends on: a wrong guess only makes a batch faster or slower.
 *
 * Pub/sub loses messages while a connection is down: the count is read again on every (re)connect
 * and whenever `refresh()` is called (the periodic batch feed does), and a stale count only ever
 * narrows the gate, never closes it.
 */
export function createBackgroundLane(o: {
  subscriber: RedisClient;
  channel: string;
  busyLimit: number;
  count: () => Promise<number>;
  quietMs?: number;
  now?: () => number;
}): Promise<BackgroundLane> {
  const now = o.now ?? Date.now;
  const quietMs = o.quietMs ?? 0;
  let interactive = 0;
  let lastHeard = Number.NEGATIVE_INFINITY;
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
    if (!Number.isFinite(n)) return;
    lastHeard = now();
    set(n);
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
    get busy() {
      return interactive > 0 || now() - lastHeard < quietMs;
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
