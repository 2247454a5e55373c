import { describe, expect, it } from 'vitest';
import { loadConfig, realStackReason } from '../../src/config.ts';
import { checkTarget, TargetRefused, type TargetMode } from '../../src/modules/webhooks/address-guard.ts';
import { targetMode } from '../../src/modules/webhooks/endpoints.ts';

/**
 * Link-local and cloud metadata addresses (169.254.0.0/16, fd00:ec2::254) are refused in every
 * mode; in the sandbox (`npm start` without a real stack) http and loopback are allowed. Which
 * mode a configuration is in (endpoints.ts targetMode, from config.ts realStackReason), and what each
 * mode lets through (address-guard.ts checkTarget; names resolved by a stub, never by DNS).
 */
const FRESH = { JWT_SECRET: 'x'.repeat(40), ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`, VNIN_HASH_KEY: 'v'.repeat(40), SUBJECT_HASH_KEY: 's'.repeat(40), NIMC_ENTERPRISE_CODE: '1138183' };
const REAL_STACKS: [string, Record<string, string>][] = [
  ['NODE_ENV=production', { ...FRESH, NODE_ENV: 'production', IDENTITY_DIALECT: 'dojah', IDENTITY_BASE_URL: 'https://api.dojah.io', PAYSTACK_BASE_URL: 'https://api.paystack.co', PAYSTACK_SECRET_KEY: 'sk_live_x', SMTP_URL: 'smtp://mail.example:587' }],
  ['a real identity authority', { ...FRESH, IDENTITY_DIALECT: 'dojah', IDENTITY_BASE_URL: 'https://api.dojah.io', PAYSTACK_SECRET_KEY: 'sk_test_mine' }],
  ['a real payment processor', { ...FRESH, PAYSTACK_BASE_URL: 'https://api.paystack.co', PAYSTACK_SECRET_KEY: 'sk_test_mine' }],
  ['a live processor key', { ...FRESH, IDENTITY_BASE_URL: 'http://127.0.0.1:4010', PAYSTACK_BASE_URL: 'http://127.0.0.1:4020', PAYSTACK_SECRET_KEY: 'sk_live_x' }],
];

// A name the stub resolves for each test, as DNS would.
const NAMES: Record<string, string[]> = {
  'localhost': ['127.0.0.1', '::1'],
  'metadata.google.internal': ['169.254.169.254'],
  'rebind.example': ['93.184.215.14', '169.254.169.254'],
  'hooks.example': ['93.184.215.14'],
};
const resolver = async (host: string) => {
  const addresses = NAMES[host];
  if (!addresses) throw new Error(`ENOTFOUND ${host}`);
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};
// Which rule refused (TargetRefused.reason): the API's answer is one detail for every address.
const refusal = (url: string, mode: TargetMode) =>
  checkTarget(url, mode, resolver).then(
    () => null,
    (err: TargetRefused) => err.reason,
  );

const SANDBOX: TargetMode = { sandbox: true };
const REAL: TargetMode = { sandbox: false };

describe('the sandbox mode of webhook targets', () => {
  it('When npm start runs with no upstream configured (or with the simulators on loopback), then webhook targets are in the sandbox mode', () => {
    for (const env of [{}, { IDENTITY_BASE_URL: 'http://127.0.0.1:4010', PAYSTACK_BASE_URL: 'http://localhost:4020' }]) {
      const c = loadConfig(env);
      expect(realStackReason(c)).toBeNull();
      expect(targetMode(c)).toEqual(SANDBOX);
    }
  });

  for (const [what, env] of REAL_STACKS) {
    it(`When the stack is configured with ${what}, then webhook targets are not in the sandbox mode`, () => {
      const c = loadConfig(env);
      expect(realStackReason(c)).not.toBeNull();
      expect(targetMode(c)).toEqual(REAL);
    });
  }

  it('When WEBHOOK_PUBLIC_ONLY=true, then even the sandbox is not in the sandbox mode', () => {
    expect(targetMode(loadConfig({ WEBHOOK_PUBLIC_ONLY: 'true' }))).toEqual(REAL);
  });
});

describe('what each mode lets through', () => {
  it('When in the sandbox, then http and loopback (as an address or a name) are allowed, and a public https receiver too', async () => {
    for (const url of ['http://127.0.0.1:4010/sandbox/hooks/mine', 'http://localhost:4010/x', 'http://[::1]:8080/x', 'https://hooks.example/x']) {
      expect(await refusal(url, SANDBOX), url).toBeNull();
    }
  });

  it('When a real stack is configured, then http and loopback are refused (a name resolving to loopback too), and a public https receiver is allowed', async () => {
    expect(await refusal('http://hooks.example/x', REAL)).toMatch(/must be https/);
    for (const url of ['https://127.0.0.1/x', 'https://localhost/x', 'https://[::1]/x', 'https://127.1/x']) expect(await refusal(url, REAL), url).toMatch(/loopback/);
    expect(await refusal('https://hooks.example/x', REAL)).toBeNull();
  });

  it('When a target is link-local or a cloud metadata address, in any spelling or behind a name, then it is refused in both modes', async () => {
    const metadata = [
      'http://169.254.169.254/latest/meta-data',
      'https://169.254.169.254/',
      'http://2852039166/',
      'http://0xA9FEA9FE/',
      'http://0251.0376.0251.0376/',
      'http://[::ffff:169.254.169.254]/',
      'https://[fd00:ec2::254]/',
      'https://[fe80::1]/',
      'http://metadata.google.internal/computeMetadata/v1/',
      'https://rebind.example/',
    ];
    // Outside the sandbox an http URL is refused for its scheme first: https shows the address rule.
    for (const mode of [SANDBOX, REAL]) {
      for (const url of metadata.map((u) => (mode.sandbox ? u : u.replace(/^http:/, 'https:')))) {
        expect(await refusal(url, mode), `${url} sandbox=${mode.sandbox}`).toMatch(/link-local or cloud metadata/);
      }
    }
  });

  it('When a target is private or not http(s), then it is refused in both modes (the sandbox allows loopback only)', async () => {
    for (const mode of [SANDBOX, REAL]) {
      for (const url of ['http://10.0.0.1/x', 'http://192.168.1.10/x', 'http://172.16.0.1/x', 'http://[fc00::1]/x', 'http://100.64.0.1/x']) {
        expect(await refusal(url.replace('http:', mode.sandbox ? 'http:' : 'https:'), mode), url).toMatch(/not a public address/);
      }
      expect(await refusal('ftp://hooks.example/x', mode)).toMatch(/must be https/);
    }
  });
});
