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
  for (const [k, v] of parts) {
    if (k !== 'v1' || v.length !== expected.length) continue;
    // Constant time over the whole string: no early exit on the first differing character.
    let diff = 0;
    for (let i = 0; i < v.length; i++) diff |= v.charCodeAt(i) ^ expected.charCodeAt(i);
    if (diff === 0) ok = true;
  }
  return ok;
}
