import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

const run = promisify(execFile);

/** Runs an entry point with the given variables over a clean copy of the environment. */
async function node(script: string, args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(JWT_|ENCRYPTION_|PAYSTACK_|IDENTITY_|NODE_ENV)/.test(k)));
  try {
    const r = await run(process.execPath, [script, ...args], { env: { ...base, LOG_LEVEL: 'silent', ...env }, timeout: 30_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

// A stack that would talk to a real authority: the published development values must not start it.
const REAL = { IDENTITY_DIALECT: 'dojah', IDENTITY_BASE_URL: 'https://api.dojah.io', DATABASE_URL: 'postgres://postgres@127.0.0.1:1/never' };

describe('published development secrets', () => {
  it('When the API starts against a real authority with the development secret, then it refuses at once, naming JWT_SECRET', async () => {
    const r = await node('src/server.ts', [], REAL);
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/^invalid configuration: JWT_SECRET: the development secret, published in the source, is refused when IDENTITY_BASE_URL is not a loopback address/);
  });

  it('When the worker starts with a live processor key and the development encryption key, then it refuses, naming ENCRYPTION_KEYS', async () => {
    const r = await node('workers/main.ts', [], { PAYSTACK_SECRET_KEY: 'sk_live_0000', JWT_SECRET: 'z'.repeat(48), DATABASE_URL: REAL.DATABASE_URL });
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/^invalid configuration: ENCRYPTION_KEYS: unset: the development key, published in the source, is refused when a live PAYSTACK_SECRET_KEY/);
  });

  it('When an operator runs secrets:generate, then fresh values print (without any database), differ each time, and start a real stack', async () => {
    const [a, b] = await Promise.all([node('src/cli/admin.ts', ['secrets:generate'], REAL), node('src/cli/admin.ts', ['secrets:generate'], REAL)]);
    expect(a.code).toBe(0);
    const first = JSON.parse(a.stdout);
    const second = JSON.parse(b.stdout);
    expect(Object.keys(first).sort()).toEqual(['ENCRYPTION_KEYS', 'JWT_SECRET', 'METRICS_TOKEN', 'SUBJECT_HASH_KEY', 'VNIN_HASH_KEY']);
    expect(first.JWT_SECRET).toMatch(/^[A-Za-z0-9_-]{64}$/);
    expect(first.ENCRYPTION_KEYS).toMatch(/^k\d{8}:[A-Za-z0-9+/]{43}=$/);
    expect(first.METRICS_TOKEN).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.VNIN_HASH_KEY).toMatch(/^[A-Za-z0-9_-]{43}$/);
    for (const k of Object.keys(first)) expect(second[k], k).not.toBe(first[k]);
    const c = loadConfig({ ...REAL, PAYSTACK_SECRET_KEY: 'sk_test_own_key', JWT_SECRET: first.JWT_SECRET, ENCRYPTION_KEYS: first.ENCRYPTION_KEYS, METRICS_TOKEN: first.METRICS_TOKEN, VNIN_HASH_KEY: first.VNIN_HASH_KEY, SUBJECT_HASH_KEY: first.SUBJECT_HASH_KEY, NIMC_ENTERPRISE_CODE: '1138183' });
    expect(c.encryptionKeys[0]!.key.length).toBe(32);
    expect(c.nimcEnterpriseCode).toBe('1138183');
    // Without our enterprise code a real stack is refused too.
    expect(() => loadConfig({ ...REAL, PAYSTACK_SECRET_KEY: 'sk_test_own_key', JWT_SECRET: first.JWT_SECRET, ENCRYPTION_KEYS: first.ENCRYPTION_KEYS, VNIN_HASH_KEY: first.VNIN_HASH_KEY, SUBJECT_HASH_KEY: first.SUBJECT_HASH_KEY })).toThrow(
      /^invalid configuration: NIMC_ENTERPRISE_CODE: is required when IDENTITY_BASE_URL is not a loopback address/,
    );
    expect(() => loadConfig({ ...REAL, PAYSTACK_SECRET_KEY: 'sk_test_own_key', JWT_SECRET: first.JWT_SECRET, ENCRYPTION_KEYS: first.ENCRYPTION_KEYS, SUBJECT_HASH_KEY: first.SUBJECT_HASH_KEY, NIMC_ENTERPRISE_CODE: '1138183' })).toThrow(
      /^invalid configuration: VNIN_HASH_KEY: the development key, published in the source, is refused/,
    );

    const env = await node('src/cli/admin.ts', ['secrets:generate', '--env'], REAL);
    expect(env.code).toBe(0);
    expect(env.stdout.trim().split('\n').map((l) => l.split('=')[0])).toEqual(['JWT_SECRET', 'ENCRYPTION_KEYS', 'METRICS_TOKEN', 'VNIN_HASH_KEY', 'SUBJECT_HASH_KEY']);
  });
});
