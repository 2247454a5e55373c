import { userInfo } from 'node:os';
import type { DatabasePool } from 'slonik';
import { createPaystackClient } from '../adapters/payment-processor/paystack.ts';
import type { Config } from '../config.ts';
import { systemClock } from '../lib/clock.ts';
import { AppError } from '../lib/errors.ts';
import { createLogger } from '../lib/logger.ts';
import { createMetrics } from '../lib/metrics.ts';
import * as orgs from '../modules/organisations/index.ts';
import { closePendingTopups, countPendingTopups, refundTopup, resolveMismatch, type OperatorDeps } from '../modules/topup/index.ts';
import { need, UsageError, type Flags } from './flags.ts';

/**
 * Retiring an organisation, orchestrated here so that neither module imports the other for it:
 * top-up says whether payment links are still open (and closes them when told to), organisations
 * retires. A payment that still arrives on a closed link is refunded, never credited.
 */
export async function deleteOrganisation(db: DatabasePool, orgId: number, closePending: boolean) {
  const pending = await countPendingTopups(db, orgId);
  if (pending > 0 && !closePending) {
    throw new AppError('conflict', `organisation ${orgId} has ${pending} pending top-up(s): retry with --close-pending to close them, or wait until they are paid or given up`);
  }
  const closed = pending > 0 ? await closePendingTopups(db, orgId, systemClock.now()) : 0;
  const deleted = await orgs.deleteOrganisation(db, orgId);
  return closePending ? { ...deleted, closed_topups: closed } : deleted;
}

export async function runTopupCommand(db: DatabasePool, config: Config, command: string, flags: Flags): Promise<unknown> {
  const deps: OperatorDeps = {
    config,
    db,
    // stdout carries the command's one line of JSON; log lines go to stderr.
    logger: createLogger({ level: config.LOG_LEVEL, name: 'admin', destination: { write: (line: string) => process.stderr.write(line) } }),
    clock: systemClock,
    processor: createPaystackClient({ baseUrl: config.paystackBaseUrl, secretKey: config.PAYSTACK_SECRET_KEY, timeoutMs: config.PAYSTACK_TIMEOUT_MS }),
    metrics: createMetrics({ process: 'admin', defaults: false }),
  };
  const reference = need(flags, 'reference');
  switch (command) {
    case 'topup:refund':
      return refundTopup(deps, reference);
    case 'topup:resolve': {
      if ((flags.credit === true) === (flags.refund === true)) throw new UsageError('give exactly one of --credit and --refund');
      return resolveMismatch(deps, reference, { action: flags.credit === true ? 'credit' : 'refund', by: operatorName(flags), note: need(flags, 'note') });
    }
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

/** Who resolved it: --by, else the operating-system account running the command. */
function operatorName(flags: Flags): string {
  if (typeof flags.by === 'string' && flags.by.trim()) return flags.by.trim().slice(0, 100);
  try {
    const name = userInfo().username;
    if (name) return name;
  } catch {
    // No passwd entry for this uid (some containers): fall back to the environment.
  }
  const fromEnv = process.env['USER'] ?? process.env['LOGNAME'];
  if (fromEnv) return fromEnv;
  throw new UsageError('--by is required: the operating-system user has no name');
}
