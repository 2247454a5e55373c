import { isIP } from 'node:net';

// Development values published in this repository: anyone can sign tokens, decrypt stored records
// or forge processor webhooks with them, so they are accepted only on a stack that talks to local
// simulators and is not production.
export const DEV_JWT_SECRET = 'dev-only-jwt-secret-change-me-0123456789abcdef';
export const DEV_ENCRYPTION_KEY_BYTES = Buffer.alloc(32, 7);
export const DEV_ENCRYPTION_KEY = 'dev1:' + DEV_ENCRYPTION_KEY_BYTES.toString('base64');
export const SANDBOX_PROCESSOR_KEY = 'sk_test_sandbox_secret';
export const DEV_VNIN_HASH_KEY = 'dev-only-vnin-hash-key-change-me-0123456789';
export const DEV_SUBJECT_HASH_KEY = 'dev-only-subject-hash-key-change-me-0123456789';

/** The token secrets in effect: JWT_SECRETS, else JWT_SECRET as a list of one, else the development secret. */
export function jwtSecretList(c: { JWT_SECRET?: string | undefined; JWT_SECRETS?: string[] | undefined }): string[] {
  return c.JWT_SECRETS ?? [c.JWT_SECRET ?? DEV_JWT_SECRET];
}

type SecretSettings = {
  NODE_ENV: string;
  JWT_SECRETS?: string[] | undefined;
  jwtSecrets: string[];
  ENCRYPTION_KEYS?: string | undefined;
  VNIN_HASH_KEY: string;
  PAYSTACK_SECRET_KEY: string;
  SUBJECT_HASH_KEY: string;
  PAYSTACK_SECRET_KEY_PREVIOUS?: string | undefined;
  IDENTITY_BASE_URL: string;
  PAYSTACK_BASE_URL: string;
};

/** 127.0.0.0/8, ::1 and localhost; an empty address means the built-in simulator, which is local too. */
export function isLoopbackUrl(url: string): boolean {
  if (!url) return true;
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return false;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1' || host === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(host);
}

/** Why this configuration may talk to real money or real people; null when it is a local sandbox. */
export function realStackReason(c: SecretSettings): string | null {
  if (c.NODE_ENV === 'production') return 'NODE_ENV=production';
  if (c.PAYSTACK_SECRET_KEY.startsWith('sk_live_')) return 'a live PAYSTACK_SECRET_KEY (sk_live_) is configured';
  if (!isLoopbackUrl(c.IDENTITY_BASE_URL)) return 'IDENTITY_BASE_URL is not a loopback address';
  if (!isLoopbackUrl(c.PAYSTACK_BASE_URL)) return 'PAYSTACK_BASE_URL is not a loopback address';
  return null;
}

function usesDevEncryptionKey(spec: string | undefined): boolean {
  if (!spec) return true;
  return spec.split(',').some((part) => Buffer.from(part.trim().split(':')[1] ?? '', 'base64').equals(DEV_ENCRYPTION_KEY_BYTES));
}

/** Each variable still holding a published development value, with the message naming why it is refused. */
export function publishedSecretIssues(c: SecretSettings): { variable: string; message: string }[] {
  const reason = realStackReason(c);
  if (!reason) return [];
  const generate = '`npm run admin -- secrets:generate` prints fresh values';
  const refused = (what: string, hint = generate) => `${what}, published in the source, is refused when ${reason} (${hint})`;
  const issues: { variable: string; message: string }[] = [];
  if (c.jwtSecrets.includes(DEV_JWT_SECRET)) issues.push({ variable: c.JWT_SECRETS ? 'JWT_SECRETS' : 'JWT_SECRET', message: refused('the development secret') });
  if (c.PAYSTACK_SECRET_KEY_PREVIOUS === SANDBOX_PROCESSOR_KEY) issues.push({ variable: 'PAYSTACK_SECRET_KEY_PREVIOUS', message: refused('the sandbox key', 'leave it empty') });
  if (usesDevEncryptionKey(c.ENCRYPTION_KEYS)) issues.push({ variable: 'ENCRYPTION_KEYS', message: refused(c.ENCRYPTION_KEYS ? 'the development key' : 'unset: the development key') });
  if (c.VNIN_HASH_KEY === DEV_VNIN_HASH_KEY) issues.push({ variable: 'VNIN_HASH_KEY', message: refused('the development key') });
  if (c.PAYSTACK_SECRET_KEY === SANDBOX_PROCESSOR_KEY) issues.push({ variable: 'PAYSTACK_SECRET_KEY', message: refused('the sandbox key', 'use your own key from the processor') });
  // With the published key, anyone holding a subject hash could test NINs against it.
  if (c.SUBJECT_HASH_KEY === DEV_SUBJECT_HASH_KEY) issues.push({ variable: 'SUBJECT_HASH_KEY', message: refused('the development key') });
  return issues;
}
