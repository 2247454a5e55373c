/**
 * Every admin command in one table: its synopsis lines are the usage text, and the flags they name
 * are the only flags the command accepts (anything else is refused before the command runs). A flag
 * followed by a value placeholder takes a value; one without is a switch. The README's Admin CLI table
 * lists the same flags, command by command (test/api/cli-flags.test.ts).
 */
export const COMMANDS: readonly { synopsis: string; note?: string }[] = [
  { synopsis: 'org:create --name N --tenancy hosted|self-hosted [--affiliate] --business-registration REF --data-protection REF [--unit-cost KOBO] [--min-topup-units N] [--email BILLING_EMAIL]' },
  { synopsis: 'org:subscription --org ID --active true|false' },
  { synopsis: 'org:limits --org ID --max-in-flight N|default' },
  { synopsis: 'org:settings --org ID [--require-consent true|false] [--require-mfa true|false] [--low-balance-units N|off] [--face-match-threshold N] [--support-contact "SENTENCE"|off] [--require-liveness true|false]', note: 'no setting flag: prints the settings' },
  { synopsis: 'org:show --org ID' },
  { synopsis: 'org:delete --org ID [--close-pending]' },
  { synopsis: 'user:create --org ID --username U --password P --role admin|member|finance [--email E] [--no-password-change]' },
  { synopsis: 'user:create --username U --password P --role platform_admin [--email E]' },
  { synopsis: 'user:mfa-reset --user ID', note: 'turns two-factor sign-in off for a user who lost the authenticator and recovery codes' },
  { synopsis: 'user:disable (--user ID | --username U)' },
  { synopsis: 'user:enable (--user ID | --username U)' },
  { synopsis: 'user:check-names', note: 'existing usernames that break the username rules (reported, not changed)' },
  { synopsis: 'wallet:adjust --org ID --units N --note TEXT', note: 'negative: --units=-N' },
  { synopsis: 'wallet:transactions --org ID [--limit N]' },
  { synopsis: 'ledger:audit' },
  { synopsis: 'secrets:generate [--env]', note: 'fresh JWT_SECRET, ENCRYPTION_KEYS entry, METRICS_TOKEN, VNIN_HASH_KEY, SUBJECT_HASH_KEY (no database needed)' },
  { synopsis: 'batch:show --id BAT-XXXXXXXXXXXX', note: "a batch's status and counts, with its organisation" },
  { synopsis: 'topup:refund --reference R' },
  { synopsis: 'topup:resolve --reference R (--credit | --refund) --note TEXT [--by OPERATOR]' },
  { synopsis: 'audit:verify', note: 'recomputes the audit chain; exit 1 naming the first broken link' },
  { synopsis: 'subject:export --nin NIN [--org ID]', note: 'every verification of one person and their batch rows still waiting' },
  { synopsis: 'subject:erase --nin NIN --confirm', note: 'erases every stored query and record of one person, cancels their waiting batch rows' },
  { synopsis: 'crypto:reencrypt [--batch N]', note: 're-seal every stored record, query, answer, e-mail and TOTP secret with the first ENCRYPTION_KEYS key (resumable; safe while running)' },
];

/** Flags any command takes: they change how a failure is reported, not what the command does. */
export const GLOBAL_FLAGS = { debug: 'boolean', help: 'boolean' } as const;

export type FlagType = 'string' | 'boolean';

// `--name VALUE` (a value placeholder follows: not a flag, a bracket, a parenthesis or a bar) or `--name`.
const FLAG = /--([a-z][a-z-]*)(?:\s+(?![-|[(])\S)?/g;

/** The flags one synopsis line names, with their types. */
export function flagsOfSynopsis(synopsis: string): Map<string, FlagType> {
  const flags = new Map<string, FlagType>();
  for (const m of synopsis.matchAll(FLAG)) flags.set(m[1]!, m[0].trim() === `--${m[1]}` ? 'boolean' : 'string');
  return flags;
}

const commandOf = (synopsis: string) => synopsis.split(' ')[0]!;

/** Each command's declared flags (a command with two synopsis lines takes the flags of both). */
export const DECLARED: ReadonlyMap<string, ReadonlyMap<string, FlagType>> = (() => {
  const byCommand = new Map<string, Map<string, FlagType>>();
  for (const { synopsis } of COMMANDS) {
    const flags = byCommand.get(commandOf(synopsis)) ?? new Map<string, FlagType>();
    for (const [name, type] of flagsOfSynopsis(synopsis)) flags.set(name, type);
    byCommand.set(commandOf(synopsis), flags);
  }
  return byCommand;
})();

/** The options node:util parseArgs reads: every flag of every command, once (a flag has one type everywhere). */
export function parseOptions(): Record<string, { type: FlagType; short?: string }> {
  const options: Record<string, { type: FlagType; short?: string }> = { debug: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } };
  for (const [command, flags] of DECLARED) {
    for (const [name, type] of flags) {
      const known = options[name];
      if (known && known.type !== type) throw new Error(`--${name} is a ${type} in ${command} but a ${known.type} elsewhere`);
      options[name] = { type };
    }
  }
  return options;
}

/** The flags given that the command does not declare; empty when all are its own. */
export function undeclaredFlags(command: string, given: Record<string, unknown>): string[] {
  const declared = DECLARED.get(command);
  return Object.keys(given).filter((name) => given[name] !== undefined && !Object.hasOwn(GLOBAL_FLAGS, name) && !declared?.has(name));
}

export const USAGE = [
  'usage: npm run admin -- <command> [flags]',
  ...COMMANDS.map(({ synopsis, note }) => `  ${synopsis}${note ? `   ${note}` : ''}`),
  '  --debug   with any command: print the stack trace of an unexpected failure',
].join('\n');
