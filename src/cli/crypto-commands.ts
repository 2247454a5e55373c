import type { DatabasePool } from 'slonik';
import type { Config } from '../config.ts';
import { reencryptAll } from '../modules/ops/index.ts';
import { int, UsageError, type Flags } from './flags.ts';

/**
 * crypto:reencrypt: every sealed row moved to the first key of ENCRYPTION_KEYS, in committed batches
 * while the service runs. Progress goes to stderr; stdout carries the one line of JSON.
 */
export async function runCryptoCommand(db: DatabasePool, config: Config, command: string, flags: Flags): Promise<unknown> {
  if (command !== 'crypto:reencrypt') throw new UsageError(`unknown command ${command}`);
  const batch = int(flags, 'batch', false) ?? 500;
  if (batch < 1 || batch > 10_000) throw new UsageError('--batch must be from 1 to 10000');
  return reencryptAll(db, config.encryptionKeys, batch, (table, moved) => process.stderr.write(`${table}: ${moved} moved\n`));
}
