import { createHmac, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { verifyWebhookSignature } from '../../clients/typescript/src/index.ts';
import { setLowBalanceUnits } from '../../src/modules/organisations/low-balance.ts';
import { checkTarget } from '../../src/modules/webhooks/address-guard.ts';
import { post } from '../../src/modules/webhooks/delivery.ts';
import { openSecret } from '../../src/modules/webhooks/endpoints.ts';
import { resealWebhookSecrets } from '../../src/modules/webhooks/reseal.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { until, waitFor } from '../setup/wait.ts';

// Signed webhooks end to end: endpoints over the API, events written with the change they
// report, delivered by the workers to the identity simulator's sandbox receiver, signatures checked
// here with an HMAC of our own (not the service's code).

const q = sql.type(z.record(z.string(), z.any()));
type Hook = { received_at: string; headers: Record<string, string>; body: string };

let stack: Stack;
/** Every body any receiver got in this file, for the personal-data scan. */
const seenBodies: string[] = [];
/** NINs and names this file used, which no body may carry. */
const personal: string[] = [];

beforeAll(async () => {
  stack = await startStack({
    env: { WEBHOOK_RETRY_FIRST_MS: '100', WEBHOOK_RETRY_MAX_MS: '300', WEBHOOK_RETRY_WINDOW_MS: '2500', WEBHOOK_POLL_MS: '200', WEBHOOK_TIMEOUT_MS: '2000' },
  });
});
afterAll(async () => stack?.close());

const hookUrl = (name: string, query = '') => `${stack.identitySim.url}/sandbox/hooks/${name}${query}`;
async function received(name: string): Promise<Hook[]> {
  const r = await fetch(hookUrl(name));
  const hooks = ((await r.json()) as { data: Hook[] }).data;
  for (const h of hooks) if (!seenBodies.includes(h.body)) seenBodies.push(h.body);
  return hooks;
}
const newName = () => `h-${randomBytes(5).toString('hex')}`;

async function register(org: OrgFixture, url: string, events: string[] = ['*']) {
  const r = await stack.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url, events, description: 'test receiver' } });
  expect(r.status).toBe(201);
  return r.body as { id: string; secret: string; url: string; events: string[]; enabled: boolean; created_at: string };
}

/** The receiver's check, written here from the documented scheme: any v1 matching HMAC-SHA256("<t>.<body>"). */
function signedWith(h: Hook, secret: string): boolean {
  const parts = h.headers['idverify-signature']!.split(',').map((p) => p.split('=') as [string, string]);
  const t = parts.find(([k]) => k === 't')![1];
  const expected = createHmac('sha256', secret).update(`${t}.${h.body}`).digest('hex');
  return parts.some(([k, v]) => k === 'v1' && v === expected);
}

async function oneEvent(name: string, type: string): Promise<{ hook: Hook; event: any }> {
  const hook = await waitFor(async () => (await received(name)).find((h) => h.headers['idverify-event-type'] === type), { what: `a ${type} event at ${name}`, timeoutMs: 20_000 });
  const event = JSON.parse(hook.body);
  expect(hook.headers['idverify-event-id']).toBe(event.id);
  expect(event).toMatchObject({ id: expect.stringMatching(/^evt_[0-9a-f]{24}$/), type, created_at: expect.any(String), data: expect.any(Object) });
  return { hook, event };
}

describe('endpoints', () => {
  it('When an administrator registers an endpoint, then 201 with a whsec_ secret shown once; members and API clients without the webhooks scope are refused', async () => {
    const org = await stack.createOrg();
    const e = await register(org, hookUrl(newName()), ['verification.completed', 'ping']);
    expect(e).toEqual({ id: expect.stringMatching(/^we_[0-9a-f]{24}$/), url: expect.any(String), events: ['verification.completed', 'ping'], description: 'test receiver', enabled: true, disabled_reason: null, secret: expect.stringMatching(/^whsec_/), created_at: expect.any(String) });
    const got = await stack.api('GET', `/v1/webhook-endpoints/${e.id}`, { token: org.admin.token });
    expect(got.status).toBe(200);
    expect(got.body.secret).toBeUndefined();
    expect((await stack.api('GET', '/v1/webhook-endpoints', { token: org.admin.token })).body.data.map((x: { id: string }) => x.id)).toEqual([e.id]);
    expect((await stack.api('GET', '/v1/webhook-endpoints', { token: org.member.token })).status).toBe(403);
    // Another organisation sees none of it.
    const other = await stack.createOrg();
    expect((await stack.api('GET', `/v1/webhook-endpoints/${e.id}`, { token: other.admin.token })).status).toBe(404);

    const client = await stack.api('POST', '/v1/api-clients', { token: org.admin.token, json: { name: 'srv', role: 'org_admin', scopes: ['verify'] } });
    expect(client.status).toBe(201);
    const tok = await stack.api('POST', '/v1/login', { form: { grant_type: 'client_credentials', client_id: client.body.client_id, client_secret: client.body.client_secret } });
    expect((await stack.api('GET', '/v1/webhook-endpoints', { token: tok.body.access_token })).status).toBe(403);
    const hooked = await stack.api('POST', '/v1/api-clients', { token: org.admin.token, json: { name: 'srv2', role: 'org_admin', scopes: ['webhooks'] } });
    expect(hooked.status).toBe(201);
    const tok2 = await stack.api('POST', '/v1/login', { form: { grant_type: 'client_credentials', client_id: hooked.body.client_id, client_secret: hooked.body.client_secret } });
    expect((await stack.api('GET', '/v1/webhook-endpoints', { token: tok2.body.access_token })).status).toBe(200);

    const patched = await stack.api('PATCH', `/v1/webhook-endpoints/${e.id}`, { token: org.admin.token, json: { events: ['*'], enabled: false } });
    expect(patched.body).toMatchObject({ events: ['*'], enabled: false });
    expect((await stack.api('DELETE', `/v1/webhook-endpoints/${e.id}`, { token: org.admin.token })).status).toBe(204);
    expect((await stack.api('GET', `/v1/webhook-endpoints/${e.id}`, { token: org.admin.token })).status).toBe(404);
  });

  it('When a URL is ftp:, link-local, cloud metadata or private, then registration is refused with 400, in the sandbox too', async () => {
    const org = await stack.createOrg();
    for (const url of ['ftp://example.com/hook', 'http://169.254.169.254/latest/meta-data', 'https://[fd00:ec2::254]/', 'https://10.1.2.3/hook', 'https://192.168.1.10/', 'https://[::ffff:10.0.0.1]/', 'https://user:pw@example.com/']) {
      const r = await stack.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url, events: ['*'] } });
      expect(r.status, url).toBe(400);
    }
  });

  it('When not in the sandbox, then a name resolving to loopback is refused at registration and at delivery (the connected address is checked), and http is refused', async () => {
    const outside = { sandbox: false };
    await expect(checkTarget('https://localhost/hook', outside)).rejects.toThrow(/loopback/);
    await expect(checkTarget('http://example.com/hook', outside)).rejects.toThrow(/must be https/);
    const name = newName();
    // At delivery: the lookup refuses before any connection, so the receiver hears nothing.
    const port = new URL(stack.identitySim.url).port;
    const o = await post(`https://localhost:${port}/sandbox/hooks/${name}`, '{}', {}, { timeoutMs: 2000, mode: outside });
    expect(o).toEqual({ ok: false, status: null, error: expect.stringMatching(/loopback/) });
    expect(await received(name)).toEqual([]);
    // The same stack with WEBHOOK_PUBLIC_ONLY refuses it over the API.
    const strict = await startStack({ workers: false, env: { WEBHOOK_PUBLIC_ONLY: 'true' } });
    try {
      const org = await strict.createOrg();
      const r = await strict.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url: `https://localhost:${port}/x`, events: ['*'] } });
      expect(r.status).toBe(400);
      expect(r.body.detail).toMatch(/loopback/);
    } finally {
      await strict.close();
    }
  });
});

describe('events delivered and signed', () => {
  it('When an asynchronous verification ends, then verification.completed is delivered, signed with the secret (a wrong secret fails), without personal data', async () => {
    const org = await stack.createOrg({ units: 5 });
    const name = newName();
    const e = await register(org, hookUrl(name), ['verification.completed']);
    const nin = `3${String(Date.now()).slice(-10)}`;
    personal.push(nin);
    const r = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin, reason: 'corporate' }, headers: { Prefer: 'respond-async' } });
    expect(r.status).toBe(202);
    const { hook, event } = await oneEvent(name, 'verification.completed');
    expect(event.data).toEqual({ reference_id: r.body.reference_id, kind: 'nin', status: 'found', verdict: 'verified', verdict_reasons: [] });
    expect(signedWith(hook, e.secret)).toBe(true);
    expect(signedWith(hook, `whsec_${randomBytes(32).toString('base64url')}`)).toBe(false);
    expect(hook.headers['content-type']).toBe('application/json');
    const record = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: r.body.reference_id } });
    expect(record.status, JSON.stringify(record.body)).toBe(200);
    // The record's own names (fname, lname, mname) and phone: the last alone was read before, and a
    // person without a phone left nothing but the NIN to scan for (a flaky failure).
    for (const k of ['fname', 'lname', 'mname', 'phone']) {
      const v = record.body.data?.[k];
      if (typeof v === 'string' && v.length > 2) personal.push(v);
    }
    expect(personal.length, JSON.stringify(record.body.data)).toBeGreaterThan(1);

    // A not-found one reports its status, and the event log lists both deliveries, newest first.
    const gone = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '01234567890', reason: 'corporate' }, headers: { Prefer: 'respond-async' } });
    const second = await waitFor(async () => (await received(name)).map((h) => JSON.parse(h.body)).find((b) => b.data.reference_id === gone.body.reference_id), { what: 'the not-found event' });
    expect(second.data).toEqual({ reference_id: gone.body.reference_id, kind: 'nin', status: 'not_found', verdict: 'not_verified', verdict_reasons: ['not_found'] });
    const log = await until(async () => (await stack.api('GET', `/v1/webhook-endpoints/${e.id}/deliveries?limit=1`, { token: org.admin.token })).body, (b) => b.data[0]?.status === 'delivered');
    expect(log.data).toEqual([{ id: expect.any(String), event_id: second.id, type: 'verification.completed', status: 'delivered', attempts: 1, last_status_code: 200, last_error: null, next_attempt_at: null, delivered_at: expect.any(String), created_at: expect.any(String) }]);
    const page2 = await stack.api('GET', `/v1/webhook-endpoints/${e.id}/deliveries?limit=1&cursor=${log.next_cursor}`, { token: org.admin.token });
    expect(page2.body.data.map((d: { event_id: string }) => d.event_id)).toEqual([event.id]);
    expect(page2.body.next_cursor).toBeNull();
  });

  it('When a fixture NIN or vNIN is asked asynchronously, then verification.completed is written with its 202 and delivered signed (found, not_found, refused with its code)', async () => {
    const org = await stack.createOrg();
    const name = newName();
    const e = await register(org, hookUrl(name), ['verification.completed']);
    const asked = [
      ['/v1/verify-nin', { nin: '12345678901', reason: 'corporate' }, { kind: 'nin', status: 'found', verdict: 'verified', verdict_reasons: [] }],
      ['/v1/verify-nin', { nin: '99999999999', reason: 'corporate' }, { kind: 'nin', status: 'not_found', verdict: 'not_verified', verdict_reasons: ['not_found'] }],
      ['/v1/verify-nin/vnin', { vnin: 'AA000000000008ZZ', reason: 'corporate' }, { kind: 'vnin', status: 'refused', code: 'vnin_expired', verdict: 'not_verified', verdict_reasons: ['refused'] }],
    ] as const;
    const expected: Record<string, unknown>[] = [];
    for (const [path, json, data] of asked) {
      const r = await stack.api('POST', path, { token: org.member.token, json, headers: { Prefer: 'respond-async' } });
      expect(r.status, r.text).toBe(202);
      expected.push({ reference_id: r.body.reference_id, ...data });
    }
    // Written in the transaction that recorded the fixture, so there before its 202 was sent.
    const written = await stack.db.anyFirst(sql.type(z.object({ body: z.string() }))`SELECT body FROM webhook_events WHERE org_id = ${org.orgId} ORDER BY created_at`);
    expect(written.map((b) => JSON.parse(b).data)).toEqual(expected);
    const hooks = await waitFor(async () => {
      const got = (await received(name)).filter((h) => h.headers['idverify-event-type'] === 'verification.completed');
      return got.length === expected.length ? got : null;
    }, { what: `${expected.length} verification.completed events at ${name}`, timeoutMs: 20_000 });
    // Deliveries run side by side: they may arrive in any order.
    expect(hooks.map((h) => JSON.parse(h.body).data)).toEqual(expect.arrayContaining(expected));
    for (const h of hooks) expect(signedWith(h, e.secret)).toBe(true);
  });

  it('When a top-up is credited and a debit takes the wallet below its line, then topup.credited and wallet.low_balance are delivered and signed', async () => {
    const org = await stack.createOrg({ units: 2 });
    const name = newName();
    const e = await register(org, hookUrl(name), ['topup.credited', 'wallet.low_balance']);
    const t = await stack.api('POST', '/v1/topup/initialize', { token: org.admin.token, form: { units: 100 } });
    expect(t.status).toBe(200);
    const paid = await fetch(`${stack.paymentSim.url}/__sim/transactions/${t.body.reference}/pay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(paid.status).toBe(200);
    const credited = await oneEvent(name, 'topup.credited');
    expect(credited.event.data).toEqual({ reference: t.body.reference, units: 100, bonus_units: 0, new_balance: 102 });
    expect(signedWith(credited.hook, e.secret)).toBe(true);

    await setLowBalanceUnits(stack.db, org.orgId, 102);
    const v = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '23456789012', reason: 'corporate' } });
    expect(v.status).toBe(200);
    const low = await oneEvent(name, 'wallet.low_balance');
    expect(low.event.data).toEqual({ balance: 101, line: 102 });
    expect(signedWith(low.hook, e.secret)).toBe(true);
  });

  it('When batches complete, pause for units and are cancelled, then batch.completed, batch.paused and batch.cancelled are delivered and signed', async () => {
    const org = await stack.createOrg({ units: 2 });
    const name = newName();
    const e = await register(org, hookUrl(name), ['batch.completed', 'batch.paused', 'batch.cancelled']);
    const done = await stack.api('POST', '/v1/verify-nin/batches', { token: org.member.token, json: { reason: 'corporate', rows: [{ nin: '12345678901' }, { nin: '31111111111' }] } });
    expect(done.status).toBe(202);
    personal.push('31111111111');
    const completed = await oneEvent(name, 'batch.completed');
    expect(completed.event.data).toEqual({ batch_id: done.body.id, status: 'completed', counts: { rows: 2, invalid: 0, found: 2, not_found: 0, failed: 0, cancelled: 0, pending: 0 } });
    expect(signedWith(completed.hook, e.secret)).toBe(true);

    // One unit left, two live rows: the second waits for units.
    const waits = await stack.api('POST', '/v1/verify-nin/batches', { token: org.member.token, json: { reason: 'corporate', rows: [{ nin: '32222222222' }, { nin: '33333333333' }] } });
    personal.push('32222222222', '33333333333');
    const paused = await oneEvent(name, 'batch.paused');
    // The counts at the moment it paused: the first row's lookup may still be on its way.
    expect(paused.event.data).toMatchObject({ batch_id: waits.body.id, status: 'paused', reason: 'insufficient_units', counts: { rows: 2, invalid: 0, cancelled: 0 } });
    expect(paused.event.data.counts.pending).toBeGreaterThanOrEqual(1);
    expect(signedWith(paused.hook, e.secret)).toBe(true);
    expect((await stack.api('POST', `/v1/verify-nin/batches/${waits.body.id}/cancel`, { token: org.member.token })).status).toBe(200);
    const cancelled = await oneEvent(name, 'batch.cancelled');
    // The row still waiting for units ends cancelled; one already at the authority finishes as it would have.
    expect(cancelled.event.data).toMatchObject({ batch_id: waits.body.id, status: 'cancelled', counts: { rows: 2, invalid: 0, not_found: 0, failed: 0 } });
    expect(cancelled.event.data.counts.cancelled).toBeGreaterThanOrEqual(1);
    expect(signedWith(cancelled.hook, e.secret)).toBe(true);
  });

  it('When the secret is rotated, then a ping carries two v1 signatures, one with each secret, and the new secret is shown once', async () => {
    const org = await stack.createOrg();
    const name = newName();
    const e = await register(org, hookUrl(name), ['ping']);
    const rotated = await stack.api('POST', `/v1/webhook-endpoints/${e.id}/rotate-secret`, { token: org.admin.token });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(e.secret);
    const test = await stack.api('POST', `/v1/webhook-endpoints/${e.id}/test`, { token: org.admin.token });
    expect(test.status).toBe(202);
    const { hook, event } = await oneEvent(name, 'ping');
    expect(event).toMatchObject({ id: test.body.event_id, data: { endpoint_id: e.id } });
    expect(hook.headers['idverify-signature']!.match(/v1=/g)).toHaveLength(2);
    expect(signedWith(hook, e.secret)).toBe(true);
    expect(signedWith(hook, rotated.body.secret)).toBe(true);
    expect(signedWith(hook, `whsec_${randomBytes(32).toString('base64url')}`)).toBe(false);

    // The client package's check says the same, and refuses a replay outside its tolerance.
    const header = hook.headers['idverify-signature']!;
    expect(await verifyWebhookSignature(hook.body, header, rotated.body.secret)).toBe(true);
    expect(await verifyWebhookSignature(hook.body, header, e.secret)).toBe(true);
    expect(await verifyWebhookSignature(hook.body, header, `whsec_${randomBytes(32).toString('base64url')}`)).toBe(false);
    expect(await verifyWebhookSignature(`${hook.body} `, header, e.secret)).toBe(false);
    expect(await verifyWebhookSignature(hook.body, header, e.secret, { now: Math.floor(Date.now() / 1000) + 3600 })).toBe(false);
  });
});

/** The guide's snippet in `lang`, run with the delivery's header, raw body and a secret; what it decided. */
function runSnippet(lang: 'python' | 'php', h: Hook, secret: string): boolean {
  const guide = readFileSync('src/modules/webhooks/webhooks.guide.md', 'utf8');
  const code = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(guide)![1]!;
  const env = { ...process.env, HOOK_HEADER: h.headers['idverify-signature']!, HOOK_BODY: h.body, HOOK_SECRET: secret };
  const out =
    lang === 'python'
      ? execFileSync('python3', ['-c', `import os\nheader = os.environ["HOOK_HEADER"]\nraw_body = os.environ["HOOK_BODY"].encode()\nsecret = os.environ["HOOK_SECRET"]\n${code}\nprint("ok" if ok else "refused")`], { env })
      : execFileSync('php', ['-r', `$header = getenv("HOOK_HEADER"); $rawBody = getenv("HOOK_BODY"); $secret = getenv("HOOK_SECRET");\n${code}\necho $ok ? "ok" : "refused";`], { env });
  return out.toString().trim() === 'ok';
}

const hasPhp = (() => {
  try {
    execFileSync('php', ['-v']);
    return true;
  } catch {
    return false;
  }
})();

describe('the documented snippets', () => {
  it('When the guide\'s Python snippet checks a real delivery, then it accepts the secret and refuses another', async () => {
    const org = await stack.createOrg();
    const name = newName();
    const e = await register(org, hookUrl(name), ['ping']);
    await stack.api('POST', `/v1/webhook-endpoints/${e.id}/test`, { token: org.admin.token });
    const { hook } = await oneEvent(name, 'ping');
    expect(runSnippet('python', hook, e.secret)).toBe(true);
    expect(runSnippet('python', hook, `whsec_${randomBytes(32).toString('base64url')}`)).toBe(false);
  });

  // Debian's php-cli, which .ci/run installs; skipped where PHP is missing (as the browser test is without chromium).
  it.skipIf(!hasPhp)('When the guide\'s PHP snippet checks a real delivery, then it accepts the secret and refuses another', async () => {
    const org = await stack.createOrg();
    const name = newName();
    const e = await register(org, hookUrl(name), ['ping']);
    await stack.api('POST', `/v1/webhook-endpoints/${e.id}/test`, { token: org.admin.token });
    const { hook } = await oneEvent(name, 'ping');
    expect(runSnippet('php', hook, e.secret)).toBe(true);
    expect(runSnippet('php', hook, `whsec_${randomBytes(32).toString('base64url')}`)).toBe(false);
  });
});

describe('retries', () => {
  it('When the receiver answers 500, then the same event is tried again with the same id, the log shows the tries, and after the retry window the endpoint is disabled and its administrators e-mailed', async () => {
    const org = await stack.createOrg();
    const name = newName();
    const e = await register(org, hookUrl(name, '?status=500'), ['ping']);
    const test = await stack.api('POST', `/v1/webhook-endpoints/${e.id}/test`, { token: org.admin.token });
    const failed = await until(async () => (await stack.api('GET', `/v1/webhook-endpoints/${e.id}/deliveries`, { token: org.admin.token })).body.data[0], (d) => d?.status === 'failed', 20_000);
    expect(failed).toMatchObject({ event_id: test.body.event_id, status: 'failed', last_status_code: 500, last_error: 'HTTP 500', next_attempt_at: null, delivered_at: null });
    expect(failed.attempts).toBeGreaterThanOrEqual(3);
    const hooks = await received(name);
    expect(hooks).toHaveLength(failed.attempts);
    expect(new Set(hooks.map((h) => h.headers['idverify-event-id']))).toEqual(new Set([test.body.event_id]));
    expect(new Set(hooks.map((h) => h.body)).size).toBe(1);
    expect((await stack.api('GET', `/v1/webhook-endpoints/${e.id}`, { token: org.admin.token })).body).toMatchObject({ enabled: false, disabled_reason: 'failing' });
    expect(await stack.db.oneFirst(q`SELECT count(*)::int FROM outbox WHERE kind = 'webhook_disabled_email' AND dedupe_key LIKE ${`webhook-disabled-${e.id}-%`}`)).toBe(1);

    // Fixed and switched on again: a redelivery sends the same event, with the same id.
    const fixed = await stack.api('PATCH', `/v1/webhook-endpoints/${e.id}`, { token: org.admin.token, json: { url: hookUrl(name), enabled: true } });
    expect(fixed.body).toMatchObject({ enabled: true, disabled_reason: null });
    const again = await stack.api('POST', `/v1/webhook-endpoints/deliveries/${failed.id}/redeliver`, { token: org.admin.token });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ event_id: test.body.event_id, status: 'pending' });
    const ok = await until(async () => (await stack.api('GET', `/v1/webhook-endpoints/${e.id}/deliveries`, { token: org.admin.token })).body.data[0], (d) => d?.status === 'delivered', 20_000);
    expect(ok).toMatchObject({ id: again.body.id, event_id: test.body.event_id, status: 'delivered', attempts: 1, last_status_code: 200 });
    expect((await received(name))[0]!.body).toBe(hooks[0]!.body);
  });

  it('When the receiver answers 410, then the endpoint is disabled at once and the event is not tried again', async () => {
    const org = await stack.createOrg();
    const name = newName();
    const e = await register(org, hookUrl(name, '?status=410'), ['ping']);
    await stack.api('POST', `/v1/webhook-endpoints/${e.id}/test`, { token: org.admin.token });
    const failed = await until(async () => (await stack.api('GET', `/v1/webhook-endpoints/${e.id}/deliveries`, { token: org.admin.token })).body.data[0], (d) => d?.status === 'failed', 20_000);
    expect(failed).toMatchObject({ status: 'failed', attempts: 1, last_status_code: 410 });
    expect((await stack.api('GET', `/v1/webhook-endpoints/${e.id}`, { token: org.admin.token })).body).toMatchObject({ enabled: false, disabled_reason: 'gone' });
    expect(await received(name)).toHaveLength(1);
    expect((await stack.api('POST', `/v1/webhook-endpoints/${e.id}/test`, { token: org.admin.token })).status).toBe(409);
  });
});

describe('fair to everyone', () => {
  it('When one organisation\'s receiver never answers, then at most 4 of its deliveries are open at once and another organisation\'s ping is delivered while its backlog waits', async () => {
    // A receiver that holds every request open and counts how many are open together.
    let open = 0;
    let maxOpen = 0;
    let seen = 0;
    const dead = createServer((req) => {
      open++;
      seen++;
      maxOpen = Math.max(maxOpen, open);
      req.socket.on('close', () => open--);
    });
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', () => r()));
    try {
      const slow = await stack.createOrg();
      const a = await register(slow, `http://127.0.0.1:${(dead.address() as AddressInfo).port}/hook`, ['ping']);
      for (let i = 0; i < 10; i++) expect((await stack.api('POST', `/v1/webhook-endpoints/${a.id}/test`, { token: slow.admin.token })).status).toBe(202);
      await waitFor(() => open === 4, { what: '4 deliveries open at the dead receiver' });

      const other = await stack.createOrg();
      const name = newName();
      const b = await register(other, hookUrl(name), ['ping']);
      await stack.api('POST', `/v1/webhook-endpoints/${b.id}/test`, { token: other.admin.token });
      await oneEvent(name, 'ping');
      const backlog = await stack.db.oneFirst(q`SELECT count(*)::int FROM webhook_deliveries WHERE endpoint_id = ${a.id} AND status = 'pending' AND attempts = 0`);
      expect(backlog, "the slow endpoint's untried deliveries when the other's ping arrived").toBeGreaterThan(0);

      await until(async () => stack.db.oneFirst(q`SELECT count(*)::int FROM webhook_deliveries WHERE endpoint_id = ${a.id} AND status = 'pending'`), (n) => n === 0, 30_000);
      expect(seen).toBeGreaterThan(4);
      expect(maxOpen).toBe(4);
    } finally {
      dead.closeAllConnections();
      await new Promise((r) => dead.close(r));
    }
  });
});

describe('key rotation', () => {
  it('When crypto:reencrypt moves to a new key, then an endpoint\'s current and previous secrets move with it and still open to what was shown', async () => {
    // A stack of its own: moving every endpoint to a key the shared stack does not hold would break its deliveries.
    const own = await startStack({ workers: false });
    try {
      const org = await own.createOrg();
      const created = await own.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url: hookUrl(newName()), events: ['ping'] } });
      const e = created.body as { id: string; secret: string };
      const rotated = await own.api('POST', `/v1/webhook-endpoints/${e.id}/rotate-secret`, { token: org.admin.token });
      const ring = [{ id: `k${randomBytes(3).toString('hex')}`, key: randomBytes(32) }, ...own.config.encryptionKeys];
      let moved = 0;
      for (let n = -1; n !== 0; moved += n) n = await resealWebhookSecrets(own.db, ring, 100);
      expect(moved).toBe(1);
      const row = await own.db.one(q`SELECT key_id, secret_enc, previous_secret_enc FROM webhook_endpoints WHERE id = ${e.id}`);
      expect(row.key_id).toBe(ring[0]!.id);
      expect(openSecret([ring[0]!], e.id, row.key_id, row.secret_enc)).toBe(rotated.body.secret);
      expect(openSecret([ring[0]!], e.id, row.key_id, row.previous_secret_enc)).toBe(e.secret);
    } finally {
      await own.close();
    }
  });
});

describe('personal data', () => {
  it('When every body this file received is scanned, then none carries a NIN or a name it used', async () => {
    // Bodies of its own, whatever ran before it in this file (tests run shuffled): a found and a
    // not-found asynchronous verification, whose NINs and names are then looked for in every body.
    const org = await stack.createOrg({ units: 5 });
    const name = newName();
    await register(org, hookUrl(name), ['verification.completed']);
    const found = `3${String(Date.now()).slice(-10)}`;
    const missing = `0${String(Date.now()).slice(-10)}`;
    personal.push(found, missing);
    for (const nin of [found, missing]) {
      const r = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin, reason: 'corporate' }, headers: { Prefer: 'respond-async' } });
      expect(r.status).toBe(202);
    }
    await waitFor(async () => ((await received(name)).length >= 2 ? true : null), { what: `two verification.completed at ${name}`, timeoutMs: 20_000 });
    const ref = JSON.parse((await received(name)).find((h) => JSON.parse(h.body).data.status === 'found')!.body).data.reference_id;
    const record = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } });
    expect(record.status, JSON.stringify(record.body)).toBe(200);
    for (const k of ['fname', 'lname', 'mname', 'phone']) {
      const v = record.body.data?.[k];
      if (typeof v === 'string' && v.length > 2) personal.push(v);
    }
    expect(seenBodies.length).toBeGreaterThanOrEqual(2);
    expect(personal.length).toBeGreaterThan(3);
    for (const body of seenBodies) for (const p of personal) expect(body.toLowerCase(), `a body carries ${p}`).not.toContain(p.toLowerCase());
  });
});
