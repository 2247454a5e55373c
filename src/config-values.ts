import { isIP } from 'node:net';
import { z } from 'zod';
import { socketAwareDatabaseUrl } from './lib/database-url.ts';

// Value shapes of the environment that the configuration schema (config.ts) shares.

export const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

// A local PostgreSQL may be named by its socket: postgres://postgres@/idverify?host=/var/run/postgresql
export const databaseUrl = z.string().transform(socketAwareDatabaseUrl).pipe(z.url());

export const csv = z
  .string()
  .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean));

// express's `trust proxy` list: addresses, subnets (CIDR) or its names for reserved ranges.
const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);
export function isProxySpec(entry: string): boolean {
  if (PROXY_NAMES.has(entry)) return true;
  const [address = '', bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (!family || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) ? Number(bits) <= (family === 4 ? 32 : 128) : family === 4 && isIP(bits) === 4;
}

