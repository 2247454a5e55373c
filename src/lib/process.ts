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
