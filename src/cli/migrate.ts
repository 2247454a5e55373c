import { loadConfigOrExit } from '../config.ts';
import { ensureDatabase } from '../lib/db.ts';
import { createLogger } from '../lib/logger.ts';
import { migrate } from '../lib/migrate.ts';

// The Procfile's `release` step: create the database if needed and apply pending migrations.
try {
  process.loadEnvFile();
} catch {
  // No .env file.
}
const config = loadConfigOrExit();
const logger = createLogger({ level: config.LOG_LEVEL, name: 'release' });
await ensureDatabase(config.DATABASE_URL);
const applied = await migrate(config.DATABASE_URL, logger);
logger.info({ applied }, 'migrations applied');
