import { ensureDatabase } from '../lib/db.ts';
import { migrate } from '../lib/migrate.ts';
import { startProcess } from '../entry.ts';

// The Procfile's `release` step: create the database if needed and apply pending migrations.
const { config, logger } = startProcess('release');
await ensureDatabase(config.DATABASE_URL);
const applied = await migrate(config.DATABASE_URL, logger);
logger.info({ applied }, 'migrations applied');
