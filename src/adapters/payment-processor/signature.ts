import { createHmac, timingSafeEqual } from 'node:crypto';

// An HMAC-SHA512 digest is 64 bytes, 128 hex characters.
const HEX_SIGNATURE = /^[0-9a-f]{128}$/i;

/** Paystack's `x-paystack-signature`: hex HMAC-SHA512 of the exact request body, keyed with the secret key. */
export function signPaystackBody(rawBody: Buffer | string, secret: string): string {
  return createHmac('sha512', secret).update(rawBody).digest('hex');
}

/**
 * Checks a webhook signature against the raw body bytes. The body must be the bytes as received:
 * re-serialising parsed JSON changes key order or spacing and breaks the digest.
 */
export function verifyPaystackSignature(rawBody: Buffer, header: string | undefined, secret: string): boolean {
  // Buffer.from(hex) silently drops invalid characters, so the shape is checked before decoding.
  if (typeof header !== 'string' || !HEX_SIGNATURE.test(header)) return false;
  const expected = createHmac('sha512', secret).update(rawBody).digest();
  const received = Buffer.from(header, 'hex');
  // timingSafeEqual throws on unequal lengths; the regex already pins the length, this guards it anyway.
  return received.length === expected.length && timingSafeEqual(received, expected);
}
