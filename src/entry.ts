import { loadConfigOrExit, type Config } from './config.ts';
import { longestJobMs } from './jobs/budgets.ts';
import { createLogger, type Logger } from './lib/logger.ts';

/**
 * What every process entry point (web, worker, release, launcher, admin CLI) does first: read a
 * `.env` file when there is one, parse the configuration once (exit naming the variable when it is
 * bad) and make the process's logger.
 */
export function startProcess(name: string): { config: Config; logger: Logger } {
  try {
    process.loadEnvFile();
  } catch {
    // No .env file: the environment alone configures the process.
  }
  const config = loadConfigOrExit();
  return { config, logger: createLogger({ level: config.LOG_LEVEL, name }) };
}

export type ProcessKind = 'api' | 'worker';

/**
 * How long a process may take to stop before it exits by itself (the launcher's SIGKILL is the
 * backstop): what it has in flight may finish (an API's requests, SHUTDOWN_GRACE_MS; a worker's
 * jobs, the longest a job may rightly run), then 5 s for the closes after them.
 */
export function shutdownDeadlineMs(config: Parameters<typeof longestJobMs>[0] & Pick<Config, 'SHUTDOWN_GRACE_MS'>, kind: ProcessKind): number {
  const drain = kind === 'api' ? config.SHUTDOWN_GRACE_MS : Math.max(config.SHUTDOWN_GRACE_MS, longestJobMs(config));
  return drain + 5000;
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
