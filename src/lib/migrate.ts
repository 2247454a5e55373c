import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import pg from 'pg';
import type { Logger } from './logger.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations', import.meta.url));

/**
 * Applies every pending migration. node-pg-migrate's advisory lock is taken in `wait` mode: a second
 * process starting at the same moment (two admin commands, a release beside a CLI) waits for the
 * first to finish and then finds nothing left to do, instead of failing with "Another migration is
 * already running". Notices a migration raises (its checks of existing rows) reach the logger.
 */
export async function migrate(databaseUrl: string, logger?: Logger): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  // A migration's own checks RAISE WARNING; PostgreSQL's chatter ("... does not exist, skipping") is a NOTICE.
  client.on('notice', (n) => {
    if (n.severity === 'WARNING') logger?.warn({ migration_warning: n.message }, 'migration check');
    else logger?.debug({ migration_notice: n.message }, 'migration notice');
  });
  await client.connect();
  try {
    const applied = await runner({
      dbClient: client,
      dir: MIGRATIONS_DIR,
      direction: 'up',
      migrationsTable: 'pgmigrations',
      singleTransaction: true,
      checkOrder: true,
      advisoryLockMode: 'wait',
      log: (msg: string) => logger?.debug({ migration: msg }, 'migration'),
    });
    return applied.map((m) => m.name);
  } finally {
    await client.end().catch(() => undefined);
  }
}
