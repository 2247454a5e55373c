import { createHash, randomBytes } from 'node:crypto';

/** 256 random bits: a fast digest is as hard to reverse as a slow hash would be. */
export function newResetToken(): { token: string; digest: Buffer } {
  const token = randomBytes(32).toString('base64url');
  return { token, digest: digestToken(token) };
}

export function digestToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

export const RESET_TOKEN_MINUTES = 30;
