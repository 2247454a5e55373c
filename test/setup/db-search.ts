import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';

/**
 * Every table of the public schema whose rows, read as text, hold `needle` (case-insensitive): for
 * proving that a value (an e-mail address, a token) was not stored anywhere. Binary columns are read
 * as their hex, so a value stored as bytes is found by its hex too.
 */
export async function tablesHolding(db: DatabasePool, needle: string): Promise<string[]> {
  const tables = await db.anyFirst(sql.type(z.object({ table_name: z.string() }))`
    SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`);
  const found: string[] = [];
  for (const t of tables) {
    const n = await db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`
      SELECT count(*) AS n FROM ${sql.identifier([t])} AS row WHERE row::text ILIKE ${`%${needle}%`}`);
    if (n > 0) found.push(t);
  }
  return found;
}
