import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new signing secret: `whsec_` and 32 random bytes. The whole string is the HMAC key. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, one v1 per secret (two during a rotation). */
export function signatureHeader(secrets: readonly string[], t: number, body: string): string {
  return [`t=${t}`, ...secrets.map((s) => `v1=${createHmac('sha256', s).update(`${t}.${body}`).digest('hex')}`)].join(',');
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
