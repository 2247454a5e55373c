import { appendFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Preloaded into the API and worker processes by the benchmark (`node --import`): measures the
 * event-loop delay, i.e. how long a ready callback (a query result, a COMMIT to send) waits for the
 * process. On SIGUSR2 it appends the percentiles since the previous signal to BENCH_LOOP_LAG_FILE.
 * With BENCH_PROFILE_DIR it also keeps a V8 CPU profile running and, on each SIGUSR2, writes the
 * profile of the window since the previous signal (`<BENCH_PROFILE_NAME>-<n>.cpuprofile`, named in
 * the appended line) and starts the next: the benchmark signals before and after each load run, so
 * each run gets a profile of its own, without the process's start-up.
 */
const file = process.env.BENCH_LOOP_LAG_FILE;
const profileDir = process.env.BENCH_PROFILE_DIR;
if (file) {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  const session = profileDir ? new Session() : null;
  if (session) {
    session.connect();
    session.post('Profiler.enable', () => session.post('Profiler.start'));
  }
  let window = 0;
  process.on('SIGUSR2', () => {
    const ms = (ns: number) => Math.round(ns / 1e4) / 100;
    const lag = { p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max), mean: ms(h.mean) };
    h.reset();
    if (!session) {
      appendFileSync(file, `${JSON.stringify(lag)}\n`);
      return;
    }
    session.post('Profiler.stop', (err, result) => {
      const path = join(profileDir!, `${process.env.BENCH_PROFILE_NAME ?? process.pid}-${++window}.cpuprofile`);
      if (!err) writeFileSync(path, JSON.stringify(result.profile));
      session.post('Profiler.start');
      appendFileSync(file, `${JSON.stringify({ ...lag, ...(err ? {} : { profile: path }) })}\n`);
    });
  });
}
