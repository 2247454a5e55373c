import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../setup/harness.ts';

const run = promisify(execFile);
let database: Awaited<ReturnType<typeof createTestDatabase>>;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => database?.drop());

async function admin(...args: string[]): Promise<{ code: number; json: any; stderr: string }> {
  try {
    const r = await run(process.execPath, ['src/cli/admin.ts', ...args], { env: { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'silent' } });
    return { code: 0, json: JSON.parse(r.stdout.trim().split('\n').at(-1)!), stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stderr: string };
    const line = e.stderr.trim().split('\n')[0] ?? '';
    return { code: e.code, json: line.startsWith('{') ? JSON.parse(line) : null, stderr: e.stderr };
  }
}

describe('admin CLI', () => {
  it('When onboarding lacks a document, then the organisation is refused with a clear message', async () => {
    const r = await admin('org:create', '--name', 'Acme', '--tenancy', 'hosted', '--business-registration', 'RC-1');
    expect(r.code).toBe(1);
    expect(r.json.detail).toMatch(/data-protection/);
    const none = await admin('org:create', '--name', 'Acme', '--tenancy', 'hosted');
    expect(none.code).toBe(1);
    expect(none.json.detail).toMatch(/business-registration and data-protection/);
  });

  // Eleven CLI processes in a row (each starts Node and connects): on a loaded 2-core machine that outgrows
  // the default 30 s, so this test has room of its own.
  it('When an organisation is created, users added, the wallet adjusted, then org:show tells it all', { timeout: 120_000 }, async () => {
    const org = await admin('org:create', '--name', 'Acme Bank', '--tenancy', 'self-hosted', '--affiliate', '--business-registration', 'RC-1', '--data-protection', 'NDPC-2', '--unit-cost', '15000', '--min-topup-units', '500');
    expect(org.code).toBe(0);
    expect(org.json).toMatchObject({ name: 'Acme Bank', tenancy: 'self-hosted', affiliate: true, unit_cost_kobo: 15000, min_topup_units: 500, units: 0, subscription_active: true });
    const id = String(org.json.id);
    expect((await admin('user:create', '--org', id, '--username', 'Boss@Acme.example', '--password', 'long-password', '--role', 'admin')).json).toMatchObject({ username: 'boss@acme.example', role: 'org_admin' });
    expect((await admin('user:create', '--org', id, '--username', 'clerk', '--password', 'long-password', '--role', 'member')).json.role).toBe('member');
    expect((await admin('user:create', '--org', id, '--username', 'clerk', '--password', 'long-password', '--role', 'member')).code).toBe(1);
    expect((await admin('user:create', '--org', id, '--username', 'x', '--password', 'short', '--role', 'member')).code).toBe(1);
    const adj = await admin('wallet:adjust', '--org', id, '--units', '250', '--note', 'opening balance');
    expect(adj.json).toMatchObject({ units_before: 0, units_after: 250 });
    expect((await admin('wallet:adjust', '--org', id, '--units=-300', '--note', 'too much')).code).toBe(1);
    expect((await admin('org:subscription', '--org', id, '--active', 'false')).json.subscription_active).toBe(false);
    const disabled = await admin('user:disable', '--username', 'clerk');
    expect(disabled.json.disabled).toBe(true);
    const show = await admin('org:show', '--org', id);
    expect(show.json.units).toBe(250);
    expect(show.json.users).toHaveLength(2);
    const tx = await admin('wallet:transactions', '--org', id);
    expect(tx.json[0]).toMatchObject({ kind: 'adjustment', units_delta: 250, units_before: 0, units_after: 250, details: { note: 'opening balance' } });
  });

  it('When the wallet holds units, then the organisation cannot be deleted; once empty it can', { timeout: 120_000 }, async () => {
    const org = await admin('org:create', '--name', 'Temp', '--tenancy', 'hosted', '--business-registration', 'RC-9', '--data-protection', 'NDPC-9');
    const id = String(org.json.id);
    await admin('wallet:adjust', '--org', id, '--units', '10', '--note', 'x');
    const refused = await admin('org:delete', '--org', id);
    expect(refused.code).toBe(1);
    expect(refused.json.detail).toMatch(/wallet holds 10 units/);
    await admin('wallet:adjust', '--org', id, '--units=-10', '--note', 'refund');
    expect((await admin('org:delete', '--org', id)).json).toEqual({ id: Number(id), deleted: true });
    expect((await admin('org:delete', '--org', id)).code).toBe(1);
  });

  it('When flags are wrong, then a usage error exits 2', async () => {
    expect((await admin('org:create', '--tenancy', 'cloud', '--name', 'x')).code).toBe(2);
    expect((await admin('no:such-command')).code).toBe(2);
    expect((await admin('org:show', '--bogus', '1')).code).toBe(2);
    expect((await admin('ledger:audit')).json.ok).toBe(true);
  });
});
