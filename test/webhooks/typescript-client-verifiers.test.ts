import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { verifyStandardWebhook, verifyWebhook, verifyWebhookSignature } from '../../clients/typescript/src/index.ts';
import { signatureHeader, standardSignatureHeader } from '../../src/modules/webhooks/signing.ts';

// The TypeScript client's verifiers, checked against signatures made by the `standardwebhooks` npm
// package (the scheme's reference library) and by the service's own signing code, as a delivery carries them.

const bytes = randomBytes(32);
const secret = `whsec_${bytes.toString('base64')}`;
const earlierForm = `whsec_${bytes.toString('base64url')}`; // URL-safe, no padding: secrets shown before the standard form
const other = `whsec_${randomBytes(32).toString('base64')}`;
const body = '{"id":"evt_1","type":"ping","data":{}}';
const id = 'evt_1';
const t = Math.floor(Date.now() / 1000);

function standardHeaders(key: string, at = t): Record<string, string> {
  return { 'webhook-id': id, 'webhook-timestamp': String(at), 'webhook-signature': new Webhook(key).sign(id, new Date(at * 1000), body) };
}

describe("the TypeScript client's Standard Webhooks verifier", () => {
  it('When standardwebhooks signs a delivery, then verifyStandardWebhook accepts it with the secret in either base64 form and refuses another secret', async () => {
    const headers = standardHeaders(secret);
    expect(await verifyStandardWebhook(body, headers, secret)).toBe(true);
    expect(await verifyStandardWebhook(body, headers, earlierForm)).toBe(true);
    expect(await verifyStandardWebhook(new TextEncoder().encode(body), headers, secret)).toBe(true);
    expect(await verifyStandardWebhook(body, headers, other)).toBe(false);
  });

  it('When the body, the id or the timestamp was changed, then verifyStandardWebhook refuses the delivery', async () => {
    const headers = standardHeaders(secret);
    expect(await verifyStandardWebhook(`${body} `, headers, secret)).toBe(false);
    expect(await verifyStandardWebhook(body, { ...headers, 'webhook-id': 'evt_2' }, secret)).toBe(false);
    expect(await verifyStandardWebhook(body, { ...headers, 'webhook-timestamp': String(t + 1) }, secret)).toBe(false);
    expect(await verifyStandardWebhook(body, { ...headers, 'webhook-signature': '' }, secret)).toBe(false);
  });

  it('When the timestamp is outside the window, then the delivery is refused unless toleranceSeconds widens it', async () => {
    const headers = standardHeaders(secret);
    expect(await verifyStandardWebhook(body, headers, secret, { now: t + 301 })).toBe(false);
    expect(await verifyStandardWebhook(body, headers, secret, { now: t + 300 })).toBe(true);
    expect(await verifyStandardWebhook(body, headers, secret, { now: t + 3600, toleranceSeconds: 7200 })).toBe(true);
  });

  it('When a rotation signs with two secrets (space-separated entries), then either secret verifies, and headers may be a fetch Headers in any case', async () => {
    const headers = new Headers({
      'Webhook-Id': id,
      'Webhook-Timestamp': String(t),
      'Webhook-Signature': standardSignatureHeader([other, secret], id, t, body),
    });
    expect(await verifyStandardWebhook(body, headers, secret)).toBe(true);
    expect(await verifyStandardWebhook(body, headers, other)).toBe(true);
    expect(await verifyStandardWebhook(body, headers, `whsec_${randomBytes(32).toString('base64')}`)).toBe(false);
  });
});

describe("the TypeScript client's verifyWebhook", () => {
  const delivery = (idverifySecret: string, standardSecret: string) => ({
    'webhook-id': id,
    'webhook-timestamp': String(t),
    'webhook-signature': standardSignatureHeader([standardSecret], id, t, body),
    'idverify-signature': signatureHeader([idverifySecret], t, body),
  });

  it('When a delivery carries both signatures made with the secret, then verifyWebhook accepts it; when either was made with another, it refuses', async () => {
    expect(await verifyWebhook(body, delivery(secret, secret), secret)).toBe(true);
    expect(await verifyWebhook(body, delivery(other, secret), secret)).toBe(false);
    expect(await verifyWebhook(body, delivery(secret, other), secret)).toBe(false);
  });

  it('When a delivery carries one scheme only, then that one decides; with none, it is refused', async () => {
    const { 'idverify-signature': ours, ...standardOnly } = delivery(secret, secret);
    expect(await verifyWebhook(body, standardOnly, secret)).toBe(true);
    expect(await verifyWebhook(body, { 'Idverify-Signature': ours }, secret)).toBe(true);
    expect(await verifyWebhookSignature(body, ours, secret)).toBe(true);
    expect(await verifyWebhook(body, {}, secret)).toBe(false);
  });
});
