import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runCommand, secretsText } from '../../src/cli/admin.ts';
import { COMMANDS, DECLARED, flagsOfSynopsis } from '../../src/cli/commands.ts';
import type { Flags } from '../../src/cli/flags.ts';
import { startStack, type Stack } from '../setup/harness.ts';

const run = promisify(execFile);
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ workers: false });
});
afterAll(async () => stack?.close());

async function admin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, ['src/cli/admin.ts', ...args], { env: { ...process.env, DATABASE_URL: stack.config.DATABASE_URL, LOG_LEVEL: 'silent', SANDBOX_SEED: 'false' } });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!);

/** The Admin CLI table of docs/operations.md (moved there from the README): each command named in a row's first cell, with the flags it shows. */
function readmeFlags(): Map<string, Set<string>> {
  const readme = readFileSync('docs/operations.md', 'utf8');
  expect(readme.indexOf('\n## Admin CLI\n'), 'docs/operations.md has its Admin CLI section').toBeGreaterThan(-1);
  const start = readme.indexOf('\n## Admin CLI\n');
  const section = readme.slice(start, readme.indexOf('\n### ', start));
  const byCommand = new Map<string, Set<string>>();
  for (const row of section.split('\n').filter((l) => l.startsWith('| `'))) {
    const firstCell = row.slice(2, row.indexOf('` |') + 1);
    for (const [, span] of firstCell.matchAll(/`([^`]+)`/g)) {
      const command = /^[a-z]+:[a-z-]+/.exec(span!)?.[0];
      if (!command) continue;
      const flags = byCommand.get(command) ?? new Set<string>();
      for (const [, flag] of span!.matchAll(/--([a-z][a-z-]*)/g)) flags.add(flag!);
      byCommand.set(command, flags);
    }
  }
  return byCommand;
}

/** A synopsis's ways of being called: each `(--a X | --b Y)` group is one flag or the other. */
function forms(synopsis: string): string[][] {
  const group = /\(([^()]*)\)/.exec(synopsis);
  if (!group) return [[...flagsOfSynopsis(synopsis).keys()]];
  return group[1]!.split(' | ').flatMap((alternative) => forms(synopsis.replace(group[0], alternative)));
}

// Each CLI run starts a process that loads the whole service (seconds on a loaded 2-core machine).
describe('the admin CLI reads every flag it documents and refuses the others', { timeout: 120_000 }, () => {
  it('when org:settings gets --require-mfa true, then the setting is on (and off with false), recorded as organisation.settings_changed', async () => {
    const org = await stack.createOrg();
    const on = await admin('org:settings', '--org', String(org.orgId), '--require-mfa', 'true');
    expect(on.code, on.stderr).toBe(0);
    expect(lastJson(on.stdout)).toMatchObject({ require_mfa: true });
    const stored = () => stack.db.oneFirst(sql.type(z.object({ require_mfa: z.boolean() }))`SELECT require_mfa FROM organisations WHERE id = ${org.orgId}`);
    expect(await stored()).toBe(true);
    const events = await stack.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`
      SELECT count(*) AS n FROM audit_events WHERE action = 'organisation.settings_changed' AND target = ${`org:${org.orgId}`} AND details->'changed' ? 'require_mfa'`);
    expect(events).toBe(1);
    const off = await admin('org:settings', '--org', String(org.orgId), '--require-mfa', 'false');
    expect(lastJson(off.stdout)).toMatchObject({ require_mfa: false });
    expect(await stored()).toBe(false);
    expect((await admin('org:settings', '--org', String(org.orgId), '--require-mfa', 'yes')).code).toBe(2);
  });

  it('when org:settings gets --support-contact, then the sentence is saved (off removes it), the trail names the setting only, and a sentence naming no contact is refused', async () => {
    const org = await stack.createOrg();
    const set = await admin('org:settings', '--org', String(org.orgId), '--support-contact', 'Write to help@bank.example');
    expect(set.code, set.stderr).toBe(0);
    expect(lastJson(set.stdout)).toMatchObject({ support_contact: 'Write to help@bank.example' });
    const details = await stack.db.oneFirst(sql.type(z.object({ details: z.any() }))`
      SELECT details FROM audit_events WHERE action = 'organisation.settings_changed' AND target = ${`org:${org.orgId}`} ORDER BY id DESC LIMIT 1`);
    expect(details).toEqual({ changed: ['support_contact'] });
    const bad = await admin('org:settings', '--org', String(org.orgId), '--support-contact', 'Ask at the branch');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/support_contact must be one sentence/);
    const off = await admin('org:settings', '--org', String(org.orgId), '--support-contact', 'off');
    expect(lastJson(off.stdout)).toMatchObject({ support_contact: null });
  });

  it('when a command gets a flag it does not declare (another command\'s, or none\'s), then one line on stderr, exit 2, and nothing done', async () => {
    const org = await stack.createOrg();
    const foreign = await admin('org:show', '--org', String(org.orgId), '--require-mfa', 'true');
    expect(foreign.code).toBe(2);
    expect(foreign.stdout).toBe('');
    expect(foreign.stderr.trim().split('\n')).toEqual([JSON.stringify({ detail: 'org:show does not take --require-mfa' })]);
    const unknown = await admin('org:settings', '--org', String(org.orgId), '--require-mfaa', 'true');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(unknown.stderr).detail).toMatch(/--require-mfaa/);
    // Refused before it ran: the subscription is untouched.
    const refused = await admin('org:subscription', '--org', String(org.orgId), '--active', 'false', '--confirm');
    expect(refused.code).toBe(2);
    expect(lastJson((await admin('org:show', '--org', String(org.orgId))).stdout).subscription_active).toBe(true);
  });

  it('the operations guide (docs/operations.md) lists exactly the flags each command declares, and --help prints every synopsis', async () => {
    const readme = readmeFlags();
    expect([...readme.keys()].sort()).toEqual([...DECLARED.keys()].sort());
    for (const [command, flags] of DECLARED) expect([...(readme.get(command) ?? [])].sort(), command).toEqual([...flags.keys()].sort());
    const help = await admin('--help', 'x');
    for (const { synopsis } of COMMANDS) expect(help.stdout).toContain(synopsis);
  });

  it('when every documented way of calling every command is run with all its flags, then each flag is read', async () => {
    const samples: Record<string, string | boolean> = {
      name: 'Walk Org', tenancy: 'hosted', 'business-registration': 'RC-1', 'data-protection': 'DP-1', 'unit-cost': '15000', 'min-topup-units': '10',
      email: 'walk@example.com', active: 'true', 'max-in-flight': '3', 'require-consent': 'true', 'require-mfa': 'false', 'low-balance-units': '5', 'face-match-threshold': '80',
      password: 'a-long-password-1', units: '5', note: 'walk', limit: '5', id: 'BAT-AAAAAAAAAAAA', reference: 'TOP-1-0000000000000000', by: 'ada',
      nin: '12345678901', batch: '10', 'support-contact': 'Write to help@bank.example', 'require-liveness': 'false',
    };
    const unread: string[] = [];
    for (const { synopsis } of COMMANDS) {
      const command = synopsis.split(' ')[0]!;
      for (const form of forms(synopsis)) {
        const org = await stack.createOrg();
        const memberId = await stack.db.oneFirst(sql.type(z.object({ id: z.coerce.number() }))`SELECT id FROM users WHERE username = ${org.member.username}`);
        const values: Flags = {};
        for (const flag of form) {
          const type = flagsOfSynopsis(synopsis).get(flag);
          if (type === 'boolean') values[flag] = true;
          else if (flag === 'org') values[flag] = String(org.orgId);
          else if (flag === 'user') values[flag] = String(memberId);
          else if (flag === 'username') values[flag] = command === 'user:create' ? `walk-${Math.random().toString(36).slice(2, 10)}` : org.member.username;
          else if (flag === 'role') values[flag] = synopsis.includes('platform_admin') ? 'platform_admin' : 'admin';
          else if (flag in samples) values[flag] = samples[flag]!;
          else throw new Error(`no sample value for --${flag}`);
        }
        const read = new Set<string>();
        const tracked = new Proxy(values, {
          get(target, key) {
            if (typeof key === 'string') read.add(key);
            return target[key as string];
          },
        });
        try {
          if (command === 'secrets:generate') secretsText(tracked);
          else await runCommand(stack.db, stack.config, command, tracked);
        } catch {
          // Refusals (not found, not allowed) are fine here: what is checked is that each flag was read.
        }
        for (const flag of form) if (!read.has(flag)) unread.push(`${command} --${flag}`);
      }
    }
    expect(unread).toEqual([]);
  }, 120_000);
});
