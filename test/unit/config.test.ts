import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, SANDBOX_IDENTITY_APP_ID } from '../../src/config.ts';
import { socketAwareDatabaseUrl } from '../../src/lib/database-url.ts';
import { connectionString } from '../../src/lib/redis.ts';

/** A production configuration that starts: real upstreams, fresh secrets. */
const PRODUCTION = {
  NODE_ENV: 'production',
  JWT_SECRET: 'x'.repeat(40),
  ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
  IDENTITY_DIALECT: 'dojah',
  IDENTITY_BASE_URL: 'https://api.dojah.io',
  PAYSTACK_BASE_URL: 'https://api.paystack.co',
  PAYSTACK_SECRET_KEY: 'sk_live_x',
  SMTP_URL: 'smtp://mail.example:587',
  VNIN_HASH_KEY: 'v'.repeat(40),
  NIMC_ENTERPRISE_CODE: '1138183',
  SUBJECT_HASH_KEY: 's'.repeat(40),
};

describe('configuration', () => {
  it('When nothing is set, then the sandbox defaults apply', () => {
    const c = loadConfig({});
    expect(c.PORT).toBe(8080);
    expect(c.DATABASE_URL).toBe('postgres://postgres@127.0.0.1:5432/idverify');
    expect(c.sandbox).toEqual({ identity: true, processor: true });
    expect(c.encryptionKeys[0]!.key.length).toBe(32);
  });

  it('When a value is bad, then the error names the variable', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ JWT_SECRET: 'short' })).toThrow(/JWT_SECRET/);
    expect(() => loadConfig({ ENCRYPTION_KEYS: 'k1:c2hvcnQ=' })).toThrow(/ENCRYPTION_KEYS/);
    expect(() => loadConfig({ BONUS_TIERS: 'not json' })).toThrow(/BONUS_TIERS/);
    expect(() => loadConfig({ DATABASE_URL: 'nope' })).toThrow(ConfigError);
  });

  it("When the face workers' metrics ports would overlap the workers', then the configuration is refused naming FACE_METRICS_PORT; apart, or without METRICS_TOKEN, it is taken", () => {
    expect(() => loadConfig({ METRICS_TOKEN: 'metrics-token', WORKER_PROCESSES: '11', FACE_METRICS_PORT: '9474' })).toThrow(/FACE_METRICS_PORT: must not overlap the workers' metrics ports \(9464-9474\)/);
    expect(loadConfig({ METRICS_TOKEN: 'metrics-token', WORKER_PROCESSES: '16' }).FACE_METRICS_PORT).toBe(9480);
    expect(loadConfig({ WORKER_PROCESSES: '11', FACE_METRICS_PORT: '9474' }).FACE_METRICS_PORT).toBe(9474);
  });

  it('When REDIS_CLUSTER_NODES lists seed nodes, then they are read as host:port; an entry without a port names the variable', () => {
    expect(loadConfig({}).REDIS_CLUSTER_NODES).toEqual([]);
    expect(loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-b.internal:7001' }).REDIS_CLUSTER_NODES).toEqual(['10.0.0.1:7000', 'redis-b.internal:7001']);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1' })).toThrow(/REDIS_CLUSTER_NODES/);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'redis://10.0.0.1:7000' })).toThrow(/REDIS_CLUSTER_NODES/);
  });

  it('When production starts with the sandbox or development secrets, then it refuses', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/JWT_SECRET/);
    const base = PRODUCTION;
    expect(loadConfig(base).sandbox).toEqual({ identity: false, processor: false });
    expect(() => loadConfig({ ...base, ENCRYPTION_KEYS: undefined })).toThrow(/ENCRYPTION_KEYS/);
    expect(() => loadConfig({ ...base, PAYSTACK_BASE_URL: '' })).toThrow(/PAYSTACK_BASE_URL/);
    expect(() => loadConfig({ ...base, IDENTITY_DIALECT: 'sandbox' })).toThrow(/IDENTITY_DIALECT/);
  });

  it('When a provider dialect has no IDENTITY_BASE_URL, then the built-in simulator stands in, with an app id of its own; production still refuses it', () => {
    for (const dialect of ['prembly', 'dojah']) {
      const c = loadConfig({ IDENTITY_DIALECT: dialect });
      expect(c.sandbox.identity, dialect).toBe(true);
      expect(c.identityBaseUrl).toBe('http://127.0.0.1:4010');
      expect(c.identityAppId).toBe(SANDBOX_IDENTITY_APP_ID);
      expect(loadConfig({ IDENTITY_DIALECT: dialect, IDENTITY_APP_ID: 'mine' }).identityAppId).toBe('mine');
      expect(loadConfig({ IDENTITY_DIALECT: dialect, IDENTITY_BASE_URL: 'http://127.0.0.1:9' }).identityAppId).toBe('');
    }
    // Production with Prembly and no base URL.
    const production = { ...PRODUCTION, IDENTITY_DIALECT: 'prembly', IDENTITY_BASE_URL: '' };
    expect(() => loadConfig(production)).toThrow(/IDENTITY_BASE_URL: is required in production \(the sandbox simulator is refused\)/);
    expect(loadConfig({ ...production, IDENTITY_BASE_URL: 'https://api.prembly.com' }).sandbox.identity).toBe(false);
  });

  it('When a real authority or processor, or a live processor key, is configured outside production, then every published development secret is refused, naming it', () => {
    const real = { IDENTITY_BASE_URL: 'https://api.dojah.io' };
    expect(() => loadConfig(real)).toThrow(/JWT_SECRET: .*published in the source.*IDENTITY_BASE_URL is not a loopback address/);
    const fresh = { VNIN_HASH_KEY: 'w'.repeat(40), NIMC_ENTERPRISE_CODE: '1138183', JWT_SECRET: 'y'.repeat(40), ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 2).toString('base64')}`, PAYSTACK_SECRET_KEY: 'sk_test_mine', SUBJECT_HASH_KEY: 's'.repeat(40) };
    for (const trigger of [real, { PAYSTACK_BASE_URL: 'https://api.paystack.co' }, { PAYSTACK_SECRET_KEY: 'sk_live_abc' }, { NODE_ENV: 'production' }]) {
      const label = JSON.stringify(trigger);
      expect(() => loadConfig({ ...fresh, ...trigger, JWT_SECRET: undefined }), label).toThrow(/JWT_SECRET/);
      expect(() => loadConfig({ ...fresh, ...trigger, ENCRYPTION_KEYS: undefined }), label).toThrow(/ENCRYPTION_KEYS: unset/);
      // The published key is refused even when written out explicitly, in any position of the ring.
      const published = `dev1:${Buffer.alloc(32, 7).toString('base64')}`;
      expect(() => loadConfig({ ...fresh, ...trigger, ENCRYPTION_KEYS: `k2:${Buffer.alloc(32, 3).toString('base64')},${published}` }), label).toThrow(/ENCRYPTION_KEYS/);
      expect(() => loadConfig({ ...fresh, ...trigger, SUBJECT_HASH_KEY: undefined }), label).toThrow(/SUBJECT_HASH_KEY: the development key, published in the source/);
      if (!('PAYSTACK_SECRET_KEY' in trigger)) {
        expect(() => loadConfig({ ...fresh, ...trigger, PAYSTACK_SECRET_KEY: 'sk_test_sandbox_secret' }), label).toThrow(/PAYSTACK_SECRET_KEY/);
      }
    }
    // Fresh values on a real (non-production) stack start.
    expect(loadConfig({ ...real, ...fresh, PAYSTACK_BASE_URL: 'https://api.paystack.co' }).sandbox).toEqual({ identity: false, processor: false });
  });

  it('When a live authority is configured, then NIMC_ENTERPRISE_CODE is required and the development VNIN_HASH_KEY refused; the sandbox uses 000000', () => {
    expect(loadConfig({}).nimcEnterpriseCode).toBe('000000');
    expect(loadConfig({ NIMC_ENTERPRISE_CODE: '715461' }).nimcEnterpriseCode).toBe('715461');
    expect(() => loadConfig({ NIMC_ENTERPRISE_CODE: '12ab' })).toThrow(/NIMC_ENTERPRISE_CODE: must be 4 to 10 digits/);
    expect(() => loadConfig({ ...PRODUCTION, NIMC_ENTERPRISE_CODE: undefined })).toThrow(/NIMC_ENTERPRISE_CODE: is required when NODE_ENV=production/);
    expect(() => loadConfig({ ...PRODUCTION, VNIN_HASH_KEY: undefined })).toThrow(/VNIN_HASH_KEY: the development key, published in the source, is refused when NODE_ENV=production/);
    expect(() => loadConfig({ VNIN_HASH_KEY: 'short' })).toThrow(/VNIN_HASH_KEY: must be at least 32 characters/);
  });

  it('When a live Paystack key is set outside production, then an empty base URL (a built-in simulator) is refused for the authority and the processor, whatever the dialect', () => {
    const fresh = { VNIN_HASH_KEY: 'w'.repeat(40), NIMC_ENTERPRISE_CODE: '1138183', JWT_SECRET: 'y'.repeat(40), ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 2).toString('base64')}`, PAYSTACK_SECRET_KEY: 'sk_live_abc', SUBJECT_HASH_KEY: 's'.repeat(40) };
    for (const dialect of ['sandbox', 'prembly', 'dojah']) {
      expect(() => loadConfig({ ...fresh, IDENTITY_DIALECT: dialect, IDENTITY_APP_ID: 'app', PAYSTACK_BASE_URL: 'https://api.paystack.co' }), dialect).toThrow(
        /IDENTITY_BASE_URL: is required with a live PAYSTACK_SECRET_KEY \(empty starts the identity simulator\)/,
      );
    }
    expect(() => loadConfig({ ...fresh, IDENTITY_BASE_URL: 'https://api.dojah.io' })).toThrow(/PAYSTACK_BASE_URL: is required with a live PAYSTACK_SECRET_KEY/);
    expect(loadConfig({ ...fresh, IDENTITY_DIALECT: 'dojah', IDENTITY_APP_ID: 'app', IDENTITY_BASE_URL: 'https://api.dojah.io', PAYSTACK_BASE_URL: 'https://api.paystack.co' }).sandbox).toEqual({ identity: false, processor: false });
  });

  it('When the authority and processor are local simulators (test and bench stacks), then the development secrets still work', () => {
    for (const url of ['http://127.0.0.1:4010', 'http://localhost:4010', 'http://[::1]:4010', 'http://127.8.9.10']) {
      const c = loadConfig({ IDENTITY_BASE_URL: url, PAYSTACK_BASE_URL: url, PAYSTACK_SECRET_KEY: 'sk_test_harness_secret', NODE_ENV: 'test' });
      expect(c.JWT_SECRET.length).toBeGreaterThanOrEqual(32);
    }
    expect(() => loadConfig({ IDENTITY_BASE_URL: 'http://127.0.0.1.example.com' })).toThrow(/JWT_SECRET/);
    expect(() => loadConfig({ PAYSTACK_BASE_URL: 'http://10.0.0.5:4020' })).toThrow(/PAYSTACK_BASE_URL is not a loopback address/);
  });

  it('When TRUST_PROXY and the per-address limit are set, then they are parsed and checked', () => {
    expect(loadConfig({}).TRUST_PROXY).toEqual([]);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8,192.168.1.1, fd00::/8, 172.16.0.0/255.240.0.0' }).TRUST_PROXY).toEqual([
      'loopback',
      '10.0.0.0/8',
      '192.168.1.1',
      'fd00::/8',
      '172.16.0.0/255.240.0.0',
    ]);
    for (const bad of ['proxy.example.com', '10.0.0.0/33', '1.2.3.4/8/8', 'everything']) expect(() => loadConfig({ TRUST_PROXY: bad }), bad).toThrow(/TRUST_PROXY/);
    expect(loadConfig({ LOGIN_MAX_FAILURES: '4' }).LOGIN_MAX_FAILURES_PER_ADDRESS).toBe(20);
    expect(loadConfig({ LOGIN_MAX_FAILURES_PER_ADDRESS: '7' }).LOGIN_MAX_FAILURES_PER_ADDRESS).toBe(7);
    expect(() => loadConfig({ LOGIN_MAX_FAILURES_PER_ADDRESS: '0' })).toThrow(/LOGIN_MAX_FAILURES_PER_ADDRESS/);
  });

  it('When the benchmark-only inline lookup is switched on, then production and other real stacks refuse it and local stacks take it', () => {
    const production = PRODUCTION;
    expect(() => loadConfig({ ...production, LOOKUP_INLINE: 'true' })).toThrow('invalid configuration: LOOKUP_INLINE: is for benchmarks only and refused in production');
    expect(() => loadConfig({ ...production, NODE_ENV: 'development', LOOKUP_INLINE: 'yes' })).toThrow(
      'invalid configuration: LOOKUP_INLINE: is for benchmarks only and refused when a live PAYSTACK_SECRET_KEY (sk_live_) is configured',
    );
    expect(loadConfig({ LOOKUP_INLINE: 'true' }).sandboxSwitches?.LOOKUP_INLINE).toBe(true);
    const local = { IDENTITY_BASE_URL: 'http://127.0.0.1:4011', PAYSTACK_BASE_URL: 'http://127.0.0.1:4021', NODE_ENV: 'test' };
    expect(loadConfig({ ...local, LOOKUP_INLINE: 'true' }).sandboxSwitches?.LOOKUP_INLINE).toBe(true);
  });

  it('When the stack is a real one, then the sandbox switches are not read at all; where a simulator stands in, they are read and checked, naming the variable', () => {
    // Values that would stop a sandbox are not even looked at by production.
    const nonsense = { IDENTITY_SIM_PORT: 'x', PAYSTACK_SIM_PORT: '-1', SANDBOX_SMTP_PORT: 'y', SANDBOX_SEED: 'perhaps', IDENTITY_SIM_LATENCY_MEDIAN_MS: '5' };
    const production = loadConfig({ ...PRODUCTION, ...nonsense });
    expect(production.sandboxSwitches).toBeNull();
    expect(Object.keys(production).filter((k) => /_SIM_|^SANDBOX_|^LOOKUP_INLINE$/.test(k))).toEqual([]);
    expect(() => loadConfig({ IDENTITY_SIM_PORT: 'x' })).toThrow('invalid configuration: IDENTITY_SIM_PORT: ');
    expect(() => loadConfig({ SANDBOX_SEED: 'perhaps' })).toThrow(/^invalid configuration: SANDBOX_SEED: /);
    expect(() => loadConfig({ IDENTITY_SIM_LATENCY_MEDIAN_MS: '5' })).toThrow('invalid configuration: IDENTITY_SIM_LATENCY_P95_MS: set together with IDENTITY_SIM_LATENCY_MEDIAN_MS, and not below it');
    // A real processor beside the identity simulator: the simulator still stands in, so its switches count.
    const fresh = { VNIN_HASH_KEY: 'w'.repeat(40), NIMC_ENTERPRISE_CODE: '1138183', JWT_SECRET: 'y'.repeat(40), ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 2).toString('base64')}`, PAYSTACK_SECRET_KEY: 'sk_test_mine', SUBJECT_HASH_KEY: 's'.repeat(40) };
    const mixed = loadConfig({ ...fresh, PAYSTACK_BASE_URL: 'https://api.paystack.co', IDENTITY_SIM_PORT: '4111' });
    expect(mixed.identityBaseUrl).toBe('http://127.0.0.1:4111');
    expect(mixed.sandboxSwitches).toMatchObject({ IDENTITY_SIM_PORT: 4111, PAYSTACK_SIM_PORT: 4020, SANDBOX_SMTP_PORT: 4025, SANDBOX_SEED: true, LOOKUP_INLINE: false });
    expect(loadConfig({ PAYSTACK_SIM_PORT: '4121' }).paystackBaseUrl).toBe('http://127.0.0.1:4121');
  });

  it('When the sweeps schedule is set under its old name, then it is honoured with a warning, and the new name wins', () => {
    const old = loadConfig({ TOPUP_SWEEP_CRON: '*/5 * * * *' });
    expect(old.RECONCILE_CRON).toBe('*/5 * * * *');
    expect(old.warnings).toEqual(['TOPUP_SWEEP_CRON is deprecated; use RECONCILE_CRON']);
    const both = loadConfig({ TOPUP_SWEEP_CRON: '*/5 * * * *', RECONCILE_CRON: '*/2 * * * *' });
    expect(both.RECONCILE_CRON).toBe('*/2 * * * *');
    expect(both.warnings).toHaveLength(1);
    expect(loadConfig({}).warnings).toEqual([]);
  });

  it('When DATABASE_URL is in libpq socket form or REDIS_URL is unix://, then both reach their drivers as socket paths; other URLs are untouched', () => {
    const c = loadConfig({ DATABASE_URL: 'postgres://postgres@/idverify?host=/var/run/postgresql&application_name=api', REDIS_URL: 'unix:///run/redis/redis.sock' });
    expect(c.DATABASE_URL).toBe('postgres://postgres@%2Fvar%2Frun%2Fpostgresql/idverify?application_name=api');
    expect(decodeURIComponent(new URL(c.DATABASE_URL).hostname)).toBe('/var/run/postgresql');
    expect(socketAwareDatabaseUrl('postgres://u:p@db.example:5432/x?sslmode=require')).toBe('postgres://u:p@db.example:5432/x?sslmode=require');
    expect(socketAwareDatabaseUrl('postgres://u@/x?host=db.example')).toBe('postgres://u@/x?host=db.example');
    expect(connectionString(c.REDIS_URL)).toBe('/run/redis/redis.sock');
    expect(connectionString('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
  });
});
