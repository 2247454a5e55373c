import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * A new signing secret: `whsec_` and the standard, padded base64 of 32 random bytes, the form the
 * Standard Webhooks libraries take. One secret serves both schemes below.
 */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, one v1 per secret (two during a rotation), keyed with the whole secret string (as Stripe's scheme). */
export function signatureHeader(secrets: readonly string[], t: number, body: string): string {
  return [`t=${t}`, ...secrets.map((s) => `v1=${createHmac('sha256', s).update(`${t}.${body}`).digest('hex')}`)].join(',');
}

/**
 * The Standard Webhooks key of a secret: the bytes its text after `whsec_` encodes in base64. Node
 * decodes either alphabet, padded or not, so a secret shown before the standard form (`whsec_` and
 * 43 URL-safe base64 characters, no padding) keys with the same 32 random bytes; its standard form
 * for a Standard Webhooks library is those bytes in standard padded base64 (`standardSecret`).
 */
export function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

/** The `whsec_<standard padded base64>` form of a secret (the same for a secret already in it). */
export function standardSecret(secret: string): string {
  return `whsec_${standardKey(secret).toString('base64')}`;
}

/**
 * Standard Webhooks' `webhook-signature`: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`,
 * keyed with standardKey, one per secret (two during a rotation), separated by a space.
 */
export function standardSignatureHeader(secrets: readonly string[], id: string, t: number, body: string): string {
  return secrets.map((s) => `v1,${createHmac('sha256', standardKey(s)).update(`${id}.${t}.${body}`).digest('base64')}`).join(' ');
}

/**
 * What a receiver does (the docs' snippets say the same): a v1 that matches the secret, and a t
 * within the tolerance of its clock, against replays.
 */
export function verifySignature(header: string, body: string, secret: string, o: { toleranceSeconds?: number; now?: number } = {}): boolean {
  const parts = header.split(',').map((p) => p.trim().split('=') as [string, string]);
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t)) return false;
  const now = o.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - t) > (o.toleranceSeconds ?? 300)) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  return parts.some(([k, v]) => k === 'v1' && /^[0-9a-f]{64}$/.test(v ?? '') && timingSafeEqual(Buffer.from(v, 'hex'), expected));
}
