import { ensureDatabase } from '../lib/db.ts';
import { describe } from '../lib/errors.ts';
import { migrate } from '../lib/migrate.ts';
import { loadConfigOrExit } from '../config.ts';
import { startProcess } from '../lib/process.ts';

// The Procfile's `release` step: create the database if needed and apply pending migrations. A
// failure is one log line (its stack with --debug) and exit 1, never an unhandled rejection.
const { config, logger } = startProcess('release', loadConfigOrExit);
try {
  await ensureDatabase(config.DATABASE_URL);
  const applied = await migrate(config.DATABASE_URL, logger);
  logger.info({ applied }, 'migrations applied');
} catch (err) {
  const { stack, ...summary } = describe(err);
  logger.error({ err: process.argv.includes('--debug') ? { ...summary, stack } : summary }, 'migrations not applied');
  process.exitCode = 1;
}
