import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { withDb } from '../setup/global.ts';

const run = promisify(execFile);
const adminUrl = inject('adminDatabaseUrl');
// A database no test has created yet: the commands below race to create and migrate it.
const fresh = `${inject('runId')}_cli_${randomBytes(3).toString('hex')}`;

afterAll(async () => {
  const c = new pg.Client({ connectionString: withDb(adminUrl, 'postgres') });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS "${fresh}" WITH (FORCE)`);
  await c.end();
});

type Outcome = { code: number; stdout: string; stderr: string };

async function admin(databaseUrl: string, ...args: string[]): Promise<Outcome> {
  try {
    const r = await run(process.execPath, ['src/cli/admin.ts', ...args], { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' } });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const STACK_FRAME = /^\s+at /m;

describe('admin CLI run concurrently', () => {
  it('When three admin commands start at the same moment on a database that does not exist yet, then each one creates, migrates or waits, and succeeds', async () => {
    const url = withDb(adminUrl, fresh);
    const outcomes = await Promise.all([
      admin(url, 'ledger:audit'),
      admin(url, 'org:create', '--name', 'Racer One', '--tenancy', 'hosted', '--business-registration', 'RC-1', '--data-protection', 'NDPC-1'),
      admin(url, 'org:create', '--name', 'Racer Two', '--tenancy', 'hosted', '--business-registration', 'RC-2', '--data-protection', 'NDPC-2'),
    ]);
    for (const o of outcomes) {
      expect(o.stderr).not.toMatch(STACK_FRAME);
      expect(o.code, o.stderr).toBe(0);
    }
    expect(JSON.parse(outcomes[0]!.stdout)).toMatchObject({ ok: true });
    expect(new Set(outcomes.slice(1).map((o) => JSON.parse(o.stdout).name))).toEqual(new Set(['Racer One', 'Racer Two']));
  });

  it('When PostgreSQL is out of reach, then one line of JSON saying so and exit 1, no stack trace; --debug adds it', async () => {
    const unreachable = 'postgres://postgres@127.0.0.1:1/nowhere';
    const r = await admin(unreachable, 'ledger:audit');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!).detail).toMatch(/^PostgreSQL is out of reach \(.*\): check DATABASE_URL and retry$/);
    const debug = await admin(unreachable, 'ledger:audit', '--debug');
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(STACK_FRAME);
  });
});
