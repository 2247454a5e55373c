import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { sql } from 'slonik';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seal } from '../../src/lib/crypto.ts';
import { secretAad } from '../../src/modules/webhooks/endpoints.ts';
import { captureDelivery, fixtureJson, type DeliveryFixture } from '../../scripts/webhook-delivery-fixture.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

/**
 * Every delivery is signed twice with the endpoint's one secret: `Idverify-Signature` (Stripe's
 * scheme, keyed with the whole secret string) and Standard Webhooks (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`, keyed with the bytes the secret's base64 encodes). Real deliveries, to the
 * identity simulator's sandbox receiver, are checked here by the two schemes' own libraries:
 * `standardwebhooks` and Stripe's `webhooks.constructEvent`, never by the service's code.
 */
let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack({ env: { WEBHOOK_POLL_MS: '200' } });
  org = await stack.createOrg();
});
afterAll(async () => stack?.close());

const stripe = new Stripe('sk_test_signature_schemes');
const capture = (rotated = false) => captureDelivery({ baseUrl: `${stack.url}/v1`, token: org.admin.token, receiverUrl: stack.identitySim.url, rotated });
const otherSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

function standardOk(d: DeliveryFixture, secret: string): boolean {
  try {
    new Webhook(secret).verify(d.body, d.headers);
    return true;
  } catch {
    return false;
  }
}
function stripeOk(d: DeliveryFixture, secret: string): boolean {
  try {
    // Our header has Stripe's format under our own name: its value goes to Stripe's verifier as-is.
    stripe.webhooks.constructEvent(d.body, d.headers['idverify-signature']!, secret);
    return true;
  } catch {
    return false;
  }
}

describe('the two signature schemes of a delivery', () => {
  it('When an endpoint is registered, then its secret is whsec_ and the standard padded base64 of 32 bytes', async () => {
    const made = await stack.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url: `${stack.identitySim.url}/sandbox/hooks/format`, events: ['ping'] } });
    expect(made.status).toBe(201);
    expect(made.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(made.body.secret.slice(6), 'base64')).toHaveLength(32);
    const rotated = await stack.api('POST', `/v1/webhook-endpoints/${made.body.id}/rotate-secret`, { token: org.admin.token });
    expect(rotated.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  });

  it('When a ping is delivered, then it carries webhook-id (the event id), webhook-timestamp (the t of Idverify-Signature) and one v1 signature; standardwebhooks and Stripe verify it with the secret and refuse another', async () => {
    const d = await capture();
    const event = JSON.parse(d.body);
    expect(d.headers['webhook-id']).toBe(event.id);
    expect(d.headers['webhook-id']).toBe(d.headers['idverify-event-id']);
    expect(d.headers['webhook-timestamp']).toMatch(/^\d{10}$/);
    expect(d.headers['idverify-signature']).toMatch(new RegExp(`^t=${d.headers['webhook-timestamp']},v1=[0-9a-f]{64}$`));
    expect(d.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    // Stripe's own test header for the same instant and secret is ours, character for character.
    expect(stripe.webhooks.generateTestHeaderString({ payload: d.body, secret: d.secret, timestamp: Number(d.headers['webhook-timestamp']) })).toBe(d.headers['idverify-signature']);

    expect(standardOk(d, d.secret)).toBe(true);
    expect(stripeOk(d, d.secret)).toBe(true);
    expect(standardOk(d, otherSecret())).toBe(false);
    expect(stripeOk(d, otherSecret())).toBe(false);
    expect(standardOk({ ...d, body: `${d.body} ` }, d.secret)).toBe(false);
    // The file a client library's test reads.
    expect(Object.keys(JSON.parse(fixtureJson(d)))).toEqual(['secret', 'headers', 'body']);
  });

  it('When the secret was rotated, then each scheme carries two signatures and both libraries verify with either secret', async () => {
    const d = await capture(true);
    expect(d.previousSecret).toBeDefined();
    expect(d.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(d.headers['idverify-signature']!.match(/v1=/g)).toHaveLength(2);
    for (const secret of [d.secret, d.previousSecret!]) {
      expect(standardOk(d, secret)).toBe(true);
      expect(stripeOk(d, secret)).toBe(true);
    }
    expect(standardOk(d, otherSecret())).toBe(false);
  });

  it('When an endpoint still has a secret of the earlier form (whsec_ and 43 URL-safe base64 characters), then Stripe verifies with it as shown, standardwebhooks with its standard form, and a rotation gives a standard one', async () => {
    const made = await stack.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url: `${stack.identitySim.url}/sandbox/hooks/old-form`, events: ['ping'] } });
    expect(made.status).toBe(201);
    // The secret as endpoints were given it before: the base64url of 32 random bytes, no padding.
    const bytes = randomBytes(32);
    const old = `whsec_${bytes.toString('base64url')}`;
    const sealed = seal(stack.config.encryptionKeys, old, secretAad(made.body.id));
    await stack.db.query(sql.unsafe`UPDATE webhook_endpoints SET secret_enc = ${sql.binary(sealed.data)}, key_id = ${sealed.keyId} WHERE id = ${made.body.id}`);
    const ping = await stack.api('POST', `/v1/webhook-endpoints/${made.body.id}/test`, { token: org.admin.token });
    expect(ping.status).toBe(202);
    const hook = await waitFor(
      async () => ((await (await fetch(`${stack.identitySim.url}/sandbox/hooks/old-form`)).json()) as { data: { headers: Record<string, string>; body: string }[] }).data.find((h) => h.headers['webhook-id'] === ping.body.event_id),
      { what: 'the ping', timeoutMs: 20_000 },
    );
    const d = { secret: old, headers: hook.headers, body: hook.body };
    expect(stripeOk(d, old)).toBe(true);
    // The standard form of the same 32 bytes: the alphabet's two characters swapped, the padding added.
    const standard = `whsec_${old.slice(6).replaceAll('-', '+').replaceAll('_', '/')}=`;
    expect(standard).toBe(`whsec_${bytes.toString('base64')}`);
    expect(standardOk(d, standard)).toBe(true);
    expect(standardOk(d, otherSecret())).toBe(false);

    const rotated = await stack.api('POST', `/v1/webhook-endpoints/${made.body.id}/rotate-secret`, { token: org.admin.token });
    expect(rotated.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  });
});

/** The guide's `n`th snippet in `lang` (0: Idverify-Signature, 1: Standard Webhooks), run on a delivery with a secret. */
function runSnippet(lang: 'python' | 'php', n: number, d: DeliveryFixture, secret: string): boolean {
  const guide = readFileSync('src/modules/webhooks/webhooks.guide.md', 'utf8');
  const code = [...guide.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))][n]![1]!;
  const env = {
    ...process.env,
    HOOK_HEADER: d.headers['idverify-signature']!,
    HOOK_ID: d.headers['webhook-id']!,
    HOOK_TIMESTAMP: d.headers['webhook-timestamp']!,
    HOOK_SIGNATURE: d.headers['webhook-signature']!,
    HOOK_BODY: d.body,
    HOOK_SECRET: secret,
  };
  const out =
    lang === 'python'
      ? execFileSync('python3', ['-c', `import os\nheader = os.environ["HOOK_HEADER"]\nmsg_id = os.environ["HOOK_ID"]\ntimestamp = os.environ["HOOK_TIMESTAMP"]\nsignature = os.environ["HOOK_SIGNATURE"]\nraw_body = os.environ["HOOK_BODY"].encode()\nsecret = os.environ["HOOK_SECRET"]\n${code}\nprint("ok" if ok else "refused")`], { env })
      : execFileSync('php', ['-r', `$header = getenv("HOOK_HEADER"); $msgId = getenv("HOOK_ID"); $timestamp = getenv("HOOK_TIMESTAMP"); $signature = getenv("HOOK_SIGNATURE"); $rawBody = getenv("HOOK_BODY"); $secret = getenv("HOOK_SECRET");\n${code}\necho $ok ? "ok" : "refused";`], { env });
  return out.toString().trim() === 'ok';
}
const has = (cmd: string, arg: string) => {
  try {
    execFileSync(cmd, [arg]);
    return true;
  } catch {
    return false;
  }
};

describe("the guide's Standard Webhooks snippets", () => {
  for (const lang of ['python', 'php'] as const) {
    it.skipIf(!has(lang === 'python' ? 'python3' : 'php', lang === 'python' ? '--version' : '-v'))(`When the guide's ${lang} Standard Webhooks snippet checks a real delivery, then it accepts either secret during a rotation and refuses another`, async () => {
      const d = await capture(true);
      expect(runSnippet(lang, 1, d, d.secret)).toBe(true);
      expect(runSnippet(lang, 1, d, d.previousSecret!)).toBe(true);
      expect(runSnippet(lang, 1, d, otherSecret())).toBe(false);
      // The Idverify-Signature snippet still accepts the same delivery.
      expect(runSnippet(lang, 0, d, d.secret)).toBe(true);
    });
  }
});
