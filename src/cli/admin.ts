import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { DatabasePool } from 'slonik';
import { loadConfigOrExit, type Config } from '../config.ts';
import { startProcess } from '../lib/process.ts';
import { createDb, ensureDatabase } from '../lib/db.ts';
import { AppError } from '../lib/errors.ts';
import { isUnavailable } from '../lib/http.ts';
import { createLogger } from '../lib/logger.ts';
import { migrate } from '../lib/migrate.ts';
import { resetMfa } from '../modules/mfa/index.ts';
import { recordAudit } from '../modules/audit/index.ts';
import * as orgs from '../modules/organisations/index.ts';
import { adjustWallet, findLedgerMismatches, findReservedMismatches, listTransactions } from '../modules/wallet/index.ts';
import { DECLARED, parseOptions, undeclaredFlags, USAGE } from './commands.ts';
import { int, need, UsageError, type Flags } from './flags.ts';
import { ORG_ADMINISTRATOR, roles, type Role } from '../lib/roles.ts';

/**
 * Operators' commands (organisation administration is not part of the public API). Each prints one
 * line of JSON on stdout; a refusal prints {"detail": ...} on stderr and exits 1, a usage error exits 2.
 */

/**
 * Fresh values for the secrets the service refuses to run a real stack with while they hold their
 * published development defaults. The encryption key id carries the date, so a later rotation can
 * put a new key first and keep this one (after a comma) to decrypt older records.
 */
export function generateSecrets(now = new Date()): Record<string, string> {
  const keyId = `k${now.toISOString().slice(0, 10).replaceAll('-', '')}`;
  return {
    JWT_SECRET: randomBytes(48).toString('base64url'),
    ENCRYPTION_KEYS: `${keyId}:${randomBytes(32).toString('base64')}`,
    METRICS_TOKEN: randomBytes(32).toString('base64url'),
    VNIN_HASH_KEY: randomBytes(32).toString('base64url'),
    SUBJECT_HASH_KEY: randomBytes(32).toString('base64url'),
  };
}

/** secrets:generate's output: one line of JSON, or NAME=value lines with --env. */
export function secretsText(flags: Flags): string {
  const secrets = generateSecrets();
  return flags.env === true ? Object.entries(secrets).map(([k, v]) => `${k}=${v}`).join('\n') : JSON.stringify(secrets);
}

/** Every role by its name or with hyphens, and `admin` for the organisation's administrator. */
const ROLES: Record<string, Role> = Object.fromEntries([
  ['admin', ORG_ADMINISTRATOR],
  ...roles.names.flatMap((r) => [[r, r], [r.replaceAll('_', '-'), r]]),
]);
const ROLE_CHOICES = ['admin', ...roles.names.filter((r) => r !== ORG_ADMINISTRATOR)];

export async function runCommand(db: DatabasePool, config: Config, command: string, flags: Flags): Promise<unknown> {
  switch (command) {
    case 'org:create': {
      const tenancy = need(flags, 'tenancy');
      if (tenancy !== 'hosted' && tenancy !== 'self-hosted') throw new UsageError('--tenancy must be hosted or self-hosted');
      const businessRegistration = typeof flags['business-registration'] === 'string' ? flags['business-registration'].trim() : '';
      const dataProtection = typeof flags['data-protection'] === 'string' ? flags['data-protection'].trim() : '';
      const missing = [!businessRegistration && '--business-registration', !dataProtection && '--data-protection'].filter(Boolean);
      if (missing.length > 0) {
        throw new AppError(
          'bad_request',
          `onboarding requires business-registration and data-protection documentation up front: missing ${missing.join(' and ')}`,
        );
      }
      return orgs.createOrganisation(
        db,
        {
          name: need(flags, 'name'),
          tenancy,
          affiliate: flags.affiliate === true,
          businessRegistration,
          dataProtection,
          unitCostKobo: int(flags, 'unit-cost', false),
          minTopupUnits: int(flags, 'min-topup-units', false),
          billingEmail: typeof flags.email === 'string' ? flags.email : undefined,
        },
        { unitCostKobo: config.DEFAULT_UNIT_COST_KOBO, minTopupUnits: config.DEFAULT_MIN_TOPUP_UNITS },
      );
    }
    case 'org:subscription': {
      const active = need(flags, 'active');
      if (active !== 'true' && active !== 'false') throw new UsageError('--active must be true or false');
      return orgs.setSubscription(db, int(flags, 'org')!, active === 'true');
    }
    case 'org:limits': {
      const raw = need(flags, 'max-in-flight');
      return orgs.setMaxInFlight(db, int(flags, 'org')!, raw === 'default' ? null : int(flags, 'max-in-flight')!);
    }
    case 'user:mfa-reset': {
      // A user who lost both the authenticator and the recovery codes: the operator turns it off.
      const user = await orgs.findUserById(db, int(flags, 'user')!);
      if (!user) throw new AppError('not_found', 'user not found');
      await resetMfa(db, user.id);
      await recordAudit(db, { orgId: user.org_id, actor: 'operator', action: 'mfa.disabled', target: `user:${user.id}`, details: { by: 'user:mfa-reset' } });
      return { user: user.id, mfa: false };
    }
    case 'org:show': {
      const org = await orgs.getOrganisation(db, int(flags, 'org')!);
      if (!org) throw new AppError('not_found', `organisation ${String(flags.org)} not found`);
      return { ...org, users: await orgs.listUsers(db, org.id) };
    }
    case 'org:delete': {
      // Loaded on demand: the top-up module and the processor client would slow every other command's start.
      const { deleteOrganisation } = await import('./topup-commands.ts');
      return deleteOrganisation(db, int(flags, 'org')!, flags['close-pending'] === true);
    }
    case 'user:create': {
      const roleName = need(flags, 'role');
      const role = Object.hasOwn(ROLES, roleName) ? ROLES[roleName] : undefined;
      if (!role) throw new UsageError(`--role must be ${ROLE_CHOICES.slice(0, -1).join(', ')} or ${ROLE_CHOICES.at(-1)}`);
      const orgId = roles.inOrganisation(role) ? int(flags, 'org')! : null;
      const requirePasswordChange = flags['no-password-change'] !== true;
      // Since the API adds people by invitation only, this is the one door for a password someone else
      // chose: the user and its audit event commit together (the event last: it locks the chain's head).
      return db.transaction(async (tx) => {
        const user = await orgs.createUser(tx, {
          orgId,
          username: need(flags, 'username'),
          password: need(flags, 'password'),
          role,
          email: typeof flags.email === 'string' ? flags.email : undefined,
          // The operator chose this password: the user changes it at first login unless told otherwise.
          requirePasswordChange,
        });
        await recordAudit(tx, {
          orgId,
          actor: 'operator',
          action: 'team.user_created',
          target: `user:${user.id}`,
          details: { role, by: 'user:create', password_change_required: user.must_change_password },
        });
        return user;
      });
    }
    case 'user:disable':
    case 'user:enable': {
      const by = flags.user !== undefined ? { id: int(flags, 'user')! } : { username: need(flags, 'username') };
      return orgs.setUserDisabled(db, by, command === 'user:disable');
    }
    case 'user:check-names': {
      const users = await orgs.findUsernameProblems(db);
      return { ok: users.length === 0, users };
    }
    case 'wallet:adjust': {
      const orgId = int(flags, 'org')!;
      await orgs.requireOrganisation(db, orgId);
      const units = int(flags, 'units')!;
      const moved = await adjustWallet(db, orgId, units, need(flags, 'note'));
      if (units < 0) await (await import('./compliance-commands.ts')).afterDebit(db, config, orgId);
      return { org: orgId, ...moved };
    }
    case 'wallet:transactions':
      return listTransactions(db, int(flags, 'org')!, Math.min(int(flags, 'limit', false) ?? 50, 1000));
    case 'ledger:audit': {
      const mismatches = await findLedgerMismatches(db);
      const reserved = await findReservedMismatches(db);
      return { ok: mismatches.length === 0 && reserved.length === 0, mismatches, reserved_mismatches: reserved };
    }
    case 'batch:show':
      return (await import('../modules/batches/index.ts')).showBatch(db, need(flags, 'id'));
    default:
      // Loaded on demand, like the top-up commands: they bring the verification and alert modules.
      if (/^(audit|subject):/.test(command) || command === 'org:settings') return (await import('./compliance-commands.ts')).runComplianceCommand(db, config, command, flags);
      if (command.startsWith('topup:')) return (await import('./topup-commands.ts')).runTopupCommand(db, config, command, flags);
      if (command.startsWith('crypto:')) return (await import('./crypto-commands.ts')).runCryptoCommand(db, config, command, flags);
      throw new UsageError(`unknown command ${command}`);
  }
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options: parseOptions() });
  } catch (err) {
    // A flag no command takes: one line, no usage screen (the flag was not a slip of the command's syntax).
    process.stderr.write(`${JSON.stringify({ detail: (err as Error).message.split('\n')[0] })}\n`);
    return 2;
  }
  const command = parsed.positionals[0];
  if (!command || parsed.values.help) {
    process.stdout.write(`${USAGE}\n`);
    return command ? 0 : 2;
  }
  if (!DECLARED.has(command)) {
    process.stderr.write(`${JSON.stringify({ detail: `unknown command ${command}` })}\n${USAGE}\n`);
    return 2;
  }
  // A flag the command does not take is refused before anything runs: silently ignoring it would
  // print an unchanged result as if the flag had worked.
  const foreign = undeclaredFlags(command, parsed.values);
  if (foreign.length > 0) {
    process.stderr.write(`${JSON.stringify({ detail: `${command} does not take ${foreign.map((f) => `--${f}`).join(', ')}` })}\n`);
    return 2;
  }
  if (command === 'secrets:generate') {
    // Before the configuration is read: this is how an operator fixes a configuration that is refused.
    process.stdout.write(`${secretsText(parsed.values)}\n`);
    return 0;
  }
  const { config } = startProcess('admin', loadConfigOrExit);
  const debug = parsed.values.debug === true;
  let db: DatabasePool | undefined;
  try {
    await ensureDatabase(config.DATABASE_URL);
    // Migration notices (checks of existing rows) go to stderr; stdout keeps its one line of JSON.
    await migrate(config.DATABASE_URL, createLogger({ level: config.LOG_LEVEL, name: 'admin', destination: { write: (line: string) => process.stderr.write(line) } }));
    db = await createDb(config.DATABASE_URL, { maxPoolSize: 2 });
    const result = await runCommand(db, config, command, parsed.values);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${JSON.stringify({ detail: err.message })}\n${USAGE}\n`);
      return 2;
    }
    if (err instanceof AppError) {
      process.stderr.write(`${JSON.stringify({ detail: err.detail })}\n`);
      return 1;
    }
    // An operational failure (database out of reach, a query refused): one line saying why, the
    // stack only when asked for with --debug.
    process.stderr.write(`${JSON.stringify({ detail: operationalFailure(err) })}\n`);
    if (debug && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
    return 1;
  } finally {
    await db?.end().catch(() => undefined);
  }
}

function operationalFailure(err: unknown): string {
  const message = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 300);
  if (isUnavailable(err)) return `PostgreSQL is out of reach (${message}): check DATABASE_URL and retry`;
  return `the command failed: ${message}`;
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2));
}
