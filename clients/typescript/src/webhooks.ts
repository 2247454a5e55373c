/**
 * Checks a webhook delivery's `Idverify-Signature` (`t=<unix seconds>,v1=<hex>[,v1=<hex>]`): true when
 * one v1 is the HMAC-SHA256 of `"<t>.<raw body>"` keyed with `secret` (the whole `whsec_...` string),
 * and `t` is within `toleranceSeconds` (default 300) of `now` (seconds; default the clock), against
 * replays. Pass the body exactly as received, before any JSON parsing. Web Crypto only: Node 18+,
 * Deno, Bun, browsers and workers alike.
 */
export async function verifyWebhookSignature(
  rawBody: string | Uint8Array,
  header: string,
  secret: string,
  opts: { toleranceSeconds?: number; now?: number } = {},
): Promise<boolean> {
  const parts = header.split(',').map((p) => {
    const i = p.indexOf('=');
    return [p.slice(0, i).trim(), p.slice(i + 1).trim()] as const;
  });
  const t = parts.find(([k]) => k === 't')?.[1] ?? '';
  if (!/^\d{1,12}$/.test(t)) return false;
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(t)) > (opts.toleranceSeconds ?? 300)) return false;
  const enc = new TextEncoder();
  const body = typeof rawBody === 'string' ? enc.encode(rawBody) : rawBody;
  const signed = new Uint8Array(t.length + 1 + body.length);
  signed.set(enc.encode(`${t}.`), 0);
  signed.set(body, t.length + 1);
  const key = await crypto.subtle.importKey('raw', enc.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, signed));
  const expected = Array.from(mac, (b) => b.toString(16).padStart(2, '0')).join('');
  let ok = false;
  for (const [k, v] of parts) if (k === 'v1' && sameText(v, expected)) ok = true;
  return ok;
}

/** A delivery's headers: a fetch `Headers`, or a plain object (Node's `req.headers`), names in any case. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof Headers !== 'undefined' && headers instanceof Headers) return headers.get(name) ?? undefined;
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v.join(', ') : v;
  }
  return undefined;
}

/**
 * The Standard Webhooks key of a secret: the bytes the base64 after `whsec_` encodes. Secrets are shown
 * as standard padded base64; one made before that form is URL-safe base64 without padding, and the
 * service decodes both alphabets, padded or not, so this does too. Text that is no base64 at all keys
 * with its UTF-8 bytes (the Python client does the same).
 */
export function standardWebhooksKey(secret: string): Uint8Array {
  const tail = (secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret).replace(/-/g, '+').replace(/_/g, '/');
  const padded = tail + '='.repeat((4 - (tail.length % 4)) % 4);
  if (/^[A-Za-z0-9+/]*={0,2}$/.test(padded) && padded.length % 4 === 0) {
    try {
      return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
    } catch {
      // not base64 after all: fall through
    }
  }
  return new TextEncoder().encode(secret);
}

/** Equal strings, compared in time that does not depend on where they differ. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Checks a delivery's Standard Webhooks signature (the `standardwebhooks` libraries' scheme): true when
 * one space-separated `v1,<base64>` entry of `webhook-signature` is the HMAC-SHA256 of
 * `"<webhook-id>.<webhook-timestamp>.<raw body>"` keyed with {@link standardWebhooksKey}(secret), and
 * `webhook-timestamp` is within `toleranceSeconds` (default 300) of `now` (seconds; default the clock).
 * Pass the body exactly as received, before any JSON parsing.
 */
export async function verifyStandardWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  opts: { toleranceSeconds?: number; now?: number } = {},
): Promise<boolean> {
  const id = header(headers, 'webhook-id') ?? '';
  const t = header(headers, 'webhook-timestamp') ?? '';
  const signatures = header(headers, 'webhook-signature') ?? '';
  if (id === '' || !/^\d{1,12}$/.test(t)) return false;
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(t)) > (opts.toleranceSeconds ?? 300)) return false;
  const enc = new TextEncoder();
  const body = typeof rawBody === 'string' ? enc.encode(rawBody) : rawBody;
  const prefix = enc.encode(`${id}.${t}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix, 0);
  signed.set(body, prefix.length);
  const key = await crypto.subtle.importKey('raw', standardWebhooksKey(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, signed));
  const expected = btoa(String.fromCharCode(...mac));
  let ok = false;
  for (const entry of signatures.split(' ')) {
    const [version, value] = entry.split(',', 2);
    if (version === 'v1' && value !== undefined && sameText(value, expected)) ok = true;
  }
  return ok;
}

/**
 * Checks a delivery: valid when every signature scheme it carries verifies (`webhook-signature` and/or
 * `idverify-signature`) and it carries at least one. A delivery whose two signatures disagree was
 * altered, whichever one a receiver happens to check (the Python, PHP, Go and Java clients agree).
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  opts: { toleranceSeconds?: number; now?: number } = {},
): Promise<boolean> {
  const standard = header(headers, 'webhook-signature');
  const ours = header(headers, 'idverify-signature');
  if (standard === undefined && ours === undefined) return false;
  if (standard !== undefined && !(await verifyStandardWebhook(rawBody, headers, secret, opts))) return false;
  if (ours !== undefined && !(await verifyWebhookSignature(rawBody, ours, secret, opts))) return false;
  return true;
}
