import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Preloaded into the API and worker processes by the benchmark (`node --import`): measures the
 * event-loop delay, i.e. how long a ready callback (a query result, a COMMIT to send) waits for the
 * process. On SIGUSR2 it appends the percentiles since the previous signal to BENCH_LOOP_LAG_FILE.
 */
const file = process.env.BENCH_LOOP_LAG_FILE;
if (file) {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  process.on('SIGUSR2', () => {
    const ms = (ns: number) => Math.round(ns / 1e4) / 100;
    appendFileSync(file, `${JSON.stringify({ p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max), mean: ms(h.mean) })}\n`);
    h.reset();
  });
}
