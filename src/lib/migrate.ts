import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import type { Logger } from './logger.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations', import.meta.url));

/** Applies every pending migration; node-pg-migrate's advisory lock makes concurrent starts safe. */
export async function migrate(databaseUrl: string, logger?: Logger): Promise<string[]> {
  const applied = await runner({
    databaseUrl,
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    singleTransaction: true,
    checkOrder: true,
    log: (msg: string) => logger?.debug({ migration: msg }, 'migration'),
  });
  return applied.map((m) => m.name);
}
