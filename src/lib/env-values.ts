import { z } from 'zod';
import { socketAwareDatabaseUrl } from './database-url.ts';

// Value shapes of the environment, shared by the production schema (src/config.ts) and the sandbox's
// (src/sandbox-config.ts).

export const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

// A local PostgreSQL may be named by its socket: postgres://postgres@/idverify?host=/var/run/postgresql
export const databaseUrl = z.string().transform(socketAwareDatabaseUrl).pipe(z.url());

export const csv = z
  .string()
  .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean));

export const port = z.coerce.number().int().min(0).max(65535);
