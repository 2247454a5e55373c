import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { createLogger, type Logger } from './logger.ts';

/**
 * What every process entry point (web, worker, release, launcher, admin CLI) does first: read a
 * `.env` file when there is one, parse the configuration once with `load` (src/config.ts's
 * loadConfigOrExit, which exits naming the variable when it is bad) and make the process's logger.
 */
export function startProcess<C extends { LOG_LEVEL: string }>(name: string, load: () => C): { config: C; logger: Logger } {
  try {
    process.loadEnvFile();
  } catch {
    // No .env file: the environment alone configures the process.
  }
  const config = load();
  return { config, logger: createLogger({ level: config.LOG_LEVEL, name }) };
}

/**
 * Runs `stop` once on SIGTERM or SIGINT (or the launcher's going), then exits 0 (1 if stopping failed
 * or outlasted `deadlineMs`: a close can wait forever on a connection that is reconnecting, and jobs
 * cut short are run again from the queue).
 */
export function stopOnSignals(stop: () => Promise<void>, logger: Logger, deadlineMs: number): void {
  let stopping = false;
  const handler = () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => {
      logger.error({ deadline_ms: deadlineMs }, 'shutdown did not finish in time: exiting');
      process.exit(1);
    }, deadlineMs).unref();
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', handler);
  process.once('SIGINT', handler);
  // A child of `npm start` (forked, with an IPC channel) stops the same way when the launcher is gone
  // without having stopped it (killed outright): it would otherwise hold its port with no one to stop it.
  if (process.send) process.once('disconnect', handler);
}

/**
 * Adds `by` to the nice value of every thread of this process, so that its CPU yields to the others'.
 * Linux keeps a nice value per thread and `os.setPriority()` changes the calling thread's alone: V8's
 * worker threads (garbage collection, WebAssembly and JavaScript compilation), started before any
 * code of ours runs, would stay at full priority. Threads started afterwards inherit it from their
 * creator. Elsewhere than Linux (no /proc/self/task) the process's own priority is lowered.
 */
export function lowerPriority(by: number): void {
  let threads: number[];
  try {
    threads = readdirSync('/proc/self/task').map(Number);
  } catch {
    setPriority(Math.min(19, getPriority() + by));
    return;
  }
  for (const tid of threads) {
    try {
      setPriority(tid, Math.min(19, getPriority(tid) + by));
    } catch (err) {
      // A thread that ended since the directory was read has nothing left to lower.
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  }
}
