import { createHash, randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';

// RFC 6238 as authenticator apps expect it: SHA-1, 6 digits, 30-second steps.
const PERIOD = 30;
const DIGITS = 6;

export function newSecret(): Secret {
  return new Secret({ size: 20 });
}

function totp(secret: Secret, issuer = 'idverify', label = 'user'): TOTP {
  return new TOTP({ issuer, label, algorithm: 'SHA1', digits: DIGITS, period: PERIOD, secret });
}

export function otpauthUri(secret: Secret, issuer: string, label: string): string {
  return totp(secret, issuer, label).toString();
}

/**
 * The 30-second step whose code `code` is, among the previous, current and next step (a phone's
 * clock a little off, a code typed as it changed), or null. The caller still has to take the step
 * (mfa.repository takeStep) so that a code is good once.
 */
export function matchStep(secretBytes: Uint8Array, code: string, now: Date): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const secret = new Secret({ buffer: Uint8Array.from(secretBytes).buffer });
  const delta = totp(secret).validate({ token: code, timestamp: now.getTime(), window: 1 });
  return delta === null ? null : Math.floor(now.getTime() / 1000 / PERIOD) + delta;
}

// Recovery codes: 16 characters of Crockford-like base32 (80 random bits), shown in groups of four.
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

export function newRecoveryCode(): string {
  const bytes = randomBytes(16);
  const chars = [...bytes].map((b) => ALPHABET[b % ALPHABET.length]).join('');
  return chars.match(/.{4}/g)!.join('-');
}

/** Spaces, dashes and case do not matter when a code is typed back. */
export function recoveryCodeHash(userId: number, code: string): Buffer | null {
  const normal = code.replace(/[\s-]/g, '').toLowerCase();
  if (!/^[a-z0-9]{16}$/.test(normal)) return null;
  return createHash('sha256').update(`${userId}:${normal}`).digest();
}
