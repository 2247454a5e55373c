import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

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

  it('When production starts with the sandbox or development secrets, then it refuses', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/JWT_SECRET/);
    const base = {
      NODE_ENV: 'production',
      JWT_SECRET: 'x'.repeat(40),
      ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
      IDENTITY_DIALECT: 'dojah',
      IDENTITY_BASE_URL: 'https://api.dojah.io',
      PAYSTACK_BASE_URL: 'https://api.paystack.co',
      PAYSTACK_SECRET_KEY: 'sk_live_x',
      SMTP_URL: 'smtp://mail.example:587',
    };
    expect(loadConfig(base).sandbox).toEqual({ identity: false, processor: false });
    expect(() => loadConfig({ ...base, ENCRYPTION_KEYS: undefined })).toThrow(/ENCRYPTION_KEYS/);
    expect(() => loadConfig({ ...base, PAYSTACK_BASE_URL: '' })).toThrow(/PAYSTACK_BASE_URL/);
    expect(() => loadConfig({ ...base, IDENTITY_DIALECT: 'sandbox' })).toThrow(/IDENTITY_DIALECT/);
  });
});
