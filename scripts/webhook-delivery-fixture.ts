/**
 * Captures one real webhook delivery of a running stack as a JSON file the client libraries' verifiers
 * read: `{"secret", "headers", "body"}`, headers lower-cased as received, body the raw string.
 *
 *   node scripts/webhook-delivery-fixture.ts --out delivery.json [--rotated]
 *
 * Reads IDVERIFY_BASE_URL (default http://localhost:8080/v1), IDVERIFY_USERNAME and IDVERIFY_PASSWORD
 * (an organisation administrator), and IDVERIFY_RECEIVER_URL (default http://127.0.0.1:4010, the identity
 * simulator of `npm start`, whose /sandbox/hooks/{name} receiver keeps what it gets). It registers an
 * endpoint on that receiver, sends it a ping, waits for the ping to arrive, writes the file and deletes
 * the endpoint. `--rotated`: the secret is rotated before the ping, so the delivery carries two
 * signatures in each scheme and the file holds the new secret. The tests use `captureDelivery` directly.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

export type DeliveryFixture = { secret: string; headers: Record<string, string>; body: string };

export type CaptureOptions = {
  /** The API's versioned base, e.g. `http://localhost:8080/v1`. */
  baseUrl: string;
  /** A bearer token of an organisation administrator (or an API client with the `webhooks` scope). */
  token: string;
  /** The identity simulator's base URL (its `/sandbox/hooks/{name}` receiver). */
  receiverUrl: string;
  /** Rotate the secret before the ping: two signatures per scheme, the file holds the new secret. */
  rotated?: boolean;
  timeoutMs?: number;
};

async function call(o: CaptureOptions, method: string, path: string, json?: unknown): Promise<any> {
  const res = await fetch(`${o.baseUrl.replace(/\/$/, '')}${path}`, {
    method,
    headers: { authorization: `Bearer ${o.token}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** One ping delivered to a fresh endpoint on the receiver, as received; `previousSecret` when rotated. */
export async function captureDelivery(o: CaptureOptions): Promise<DeliveryFixture & { previousSecret?: string; eventId: string }> {
  const name = `fixture-${randomBytes(6).toString('hex')}`;
  const hookUrl = `${o.receiverUrl.replace(/\/$/, '')}/sandbox/hooks/${name}`;
  const made = await call(o, 'POST', '/webhook-endpoints', { url: hookUrl, events: ['ping'], description: 'delivery fixture' });
  try {
    let secret: string = made.secret;
    let previousSecret: string | undefined;
    if (o.rotated) {
      previousSecret = secret;
      secret = (await call(o, 'POST', `/webhook-endpoints/${made.id}/rotate-secret`)).secret;
    }
    const ping = await call(o, 'POST', `/webhook-endpoints/${made.id}/test`);
    const deadline = Date.now() + (o.timeoutMs ?? 20_000);
    for (;;) {
      // A poll that fails (a connection reset under load) is only a poll: the next one asks again.
      const got = (await fetch(hookUrl)
        .then((r) => r.json())
        .catch(() => ({ data: [] }))) as { data: { headers: Record<string, string>; body: string }[] };
      const hook = got.data.find((h) => h.headers['webhook-id'] === ping.event_id);
      if (hook) return { secret, headers: hook.headers, body: hook.body, eventId: ping.event_id, ...(previousSecret ? { previousSecret } : {}) };
      if (Date.now() > deadline) throw new Error(`the ping ${ping.event_id} did not reach ${hookUrl}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await call(o, 'DELETE', `/webhook-endpoints/${made.id}`).catch(() => undefined);
  }
}

/** The file's content: exactly `{"secret", "headers", "body"}`. */
export function fixtureJson(d: DeliveryFixture): string {
  return `${JSON.stringify({ secret: d.secret, headers: d.headers, body: d.body }, null, 2)}\n`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { out: { type: 'string' }, rotated: { type: 'boolean', default: false } } });
  if (!values.out) throw new Error('--out <file.json> is required');
  const baseUrl = process.env.IDVERIFY_BASE_URL ?? 'http://localhost:8080/v1';
  const login = await fetch(`${baseUrl.replace(/\/$/, '')}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: process.env.IDVERIFY_USERNAME ?? '', password: process.env.IDVERIFY_PASSWORD ?? '' }).toString(),
  });
  if (!login.ok) throw new Error(`login: ${login.status} ${await login.text()}`);
  const token = ((await login.json()) as { access_token: string }).access_token;
  const d = await captureDelivery({ baseUrl, token, receiverUrl: process.env.IDVERIFY_RECEIVER_URL ?? 'http://127.0.0.1:4010', rotated: values.rotated });
  writeFileSync(values.out, fixtureJson(d));
  process.stdout.write(`wrote ${values.out} (event ${d.eventId})\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
