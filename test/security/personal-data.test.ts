import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { signPaystackBody } from '../../src/adapters/payment-processor/signature.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { queuesIdle } from '../setup/jobs.ts';
import { waitFor } from '../setup/wait.ts';

// After a realistic run (every verification mode, fixtures, not-found, upstream faults, invalid
// input carrying personal data, idempotent replays, requeries, a top-up paid by webhook), no NIN,
// phone number, name or photo from the test data may appear in any log line (API and worker, at
// debug level) nor anywhere in Redis under the stack's prefix: key names, strings, hashes (job
// `data`, `returnvalue`, `failedReason`, `stacktrace`), lists, sets, sorted sets and streams.

let stack: Stack;
let org: OrgFixture;
const secrets = new Set<string>();

beforeAll(async () => {
  stack = await startStack({ captureLogs: true, env: { IDENTITY_MAX_ATTEMPTS: '2' } });
  org = await stack.createOrg({ units: 100 });
});
afterAll(async () => stack?.close());

type Person = Record<string, string>;

function remember(p: Person | undefined) {
  if (!p) return;
  for (const field of ['nin', 'phone']) {
    const v = p[field];
    if (v && v.length >= 10) {
      secrets.add(v);
      // The last ten digits catch +234 and 234 spellings of the same number.
      if (field === 'phone') secrets.add(v.slice(-10));
    }
  }
  for (const field of ['fname', 'mname', 'lname']) {
    const v = p[field];
    if (v && v.length >= 4) secrets.add(v);
  }
  if (p.image && p.image.length > 80) secrets.add(p.image.slice(20, 68));
}

async function verify(path: string, json: unknown, headers: Record<string, string> = {}) {
  const r = await stack.api('POST', path, { token: org.member.token, json, headers });
  remember(r.body?.data);
  return r;
}

it('When a realistic flow has run, then no NIN, phone, name or photo appears in any log line or Redis value', { timeout: 60_000 }, async () => {
  const liveNin = '27182818284';
  const phone = '08061234567';
  const first = 'Oluwaseyifunmi';
  const last = 'Adebayo-Nwachukwu';
  for (const s of [liveNin, phone, phone.slice(-10), first, last, '12345678901', '12345678902', '50010000001', '01234567891', '76543210987']) secrets.add(s);

  const fixture = await verify('/v1/verify-nin', { nin: '12345678901', reason: 'corporate' });
  expect(fixture.status).toBe(200);
  expect((await verify('/v1/verify-nin', { nin: '12345678902', reason: 'corporate' })).status).toBe(200);
  const live = await verify('/v1/verify-nin', { nin: liveNin, reason: 'corporate' }, { 'idempotency-key': 'pii-flow-key-1' });
  expect(live.status).toBe(200);
  // Replayed from the idempotency store (decrypted, re-sent).
  expect((await verify('/v1/verify-nin', { nin: liveNin, reason: 'corporate' }, { 'idempotency-key': 'pii-flow-key-1' })).status).toBe(200);
  expect((await verify('/v1/verify-nin/phone', { phone_no: phone, reason: 'corporate' })).status).toBe(200);
  expect((await verify('/v1/verify-nin/demography', { first_name: first, last_name: last, date_of_birth: '14-03-1991', gender: 'f' })).status).toBe(200);
  expect((await verify('/v1/verify-nin', { nin: '01234567891', reason: 'corporate' })).status).toBe(404);
  const failing = await verify('/v1/verify-nin', { nin: '50010000001', reason: 'corporate' });
  expect(failing.status).toBe(502);
  expect(failing.body).toMatchObject({ detail: 'Identity authority unavailable, nothing was charged', code: 'upstream_unavailable' });
  // Invalid input that carries personal data: must not be echoed into logs either.
  await verify('/v1/verify-nin', { nin: '7654321098', reason: 'corporate' });
  await verify('/v1/verify-nin', { nin: '76543210987', reason: 'not-a-reason' });
  await verify('/v1/verify-nin', { nin: 76543210987, reason: 'corporate' });
  await verify('/v1/verify-nin/phone', { phone_no: `+234${phone.slice(1)}x`, reason: 'corporate' });
  await verify('/v1/verify-nin/demography', { first_name: first, last_name: last, date_of_birth: '31-02-1991', gender: 'f' });
  await stack.api('POST', '/v1/verify-nin', { token: org.member.token, raw: `{"nin":"${liveNin}",`, contentType: 'application/json' });
  await stack.api('POST', `/v1/verify-nin?nin=${liveNin}&phone=${phone}`, { token: org.member.token, json: { nin: liveNin } });
  for (const ref of [live.body.data.reference_id, fixture.body.data.reference_id]) {
    const rq = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } });
    expect(rq.status).toBe(200);
    remember(rq.body.data);
  }

  const t = await stack.api('POST', '/v1/topup/initialize', { token: org.admin.token, form: { units: 100 } });
  expect(t.status).toBe(200);
  await fetch(`${stack.paymentSim.url}/__sim/transactions/${t.body.reference}/pay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  // A forged event naming a NIN and a phone in its metadata: refused, and nothing of it logged.
  const forged = JSON.stringify({ event: 'charge.success', data: { reference: t.body.reference, metadata: { nin: liveNin, phone } } });
  const refused = await stack.api('POST', '/v1/webhooks/paystack', { raw: forged, contentType: 'application/json', headers: { 'x-paystack-signature': signPaystackBody(forged, 'wrong') } });
  expect(refused.status).toBe(401);
  const credited = await waitFor(
    async () => {
      const v = await stack.api('POST', '/v1/topup/verify', { token: org.admin.token, form: { reference: t.body.reference } });
      return v.status === 200 ? v : null;
    },
    { what: 'the paid top-up verified', timeoutMs: 10_000, intervalMs: 100 },
  );
  expect(['Top-up successful', 'Top-up already credited']).toContain(credited.body.message);
  // Everything the flow started (lookups, credits, the receipt e-mail) has run and logged before the scan.
  await queuesIdle(stack);

  expect(secrets.size).toBeGreaterThan(15);
  const needles = [...secrets].map((s) => ({ s, re: new RegExp(`(?<![0-9A-Za-z])${s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![0-9A-Za-z])`) }));
  const found: string[] = [];
  const scan = (where: string, text: string) => {
    for (const n of needles) if (n.re.test(text)) found.push(`${n.s} in ${where}: ${text.slice(0, 200)}`);
  };

  // The scanner itself must work: a planted value is found.
  scan('self-test', `{"x":"${liveNin}","y":"${first}"}`);
  expect(found).toHaveLength(2);
  found.length = 0;

  expect(stack.logs.length).toBeGreaterThan(20);
  for (const line of stack.logs) scan('log', line);

  const redis = new Redis(stack.config.REDIS_URL, { maxRetriesPerRequest: 3 });
  let keys = 0;
  try {
    let cursor = '0';
    for (let i = 0; i < 10_000; i++) {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${stack.config.REDIS_PREFIX}:*`, 'COUNT', 500);
      for (const key of batch) {
        keys++;
        scan('redis key name', key);
        const type = await redis.type(key);
        if (type === 'string') scan(key, (await redis.get(key)) ?? '');
        else if (type === 'hash') scan(key, JSON.stringify(await redis.hgetall(key)));
        else if (type === 'list') scan(key, JSON.stringify(await redis.lrange(key, 0, -1)));
        else if (type === 'set') scan(key, JSON.stringify(await redis.smembers(key)));
        else if (type === 'zset') scan(key, JSON.stringify(await redis.zrange(key, '0', '-1', 'WITHSCORES')));
        else if (type === 'stream') scan(key, JSON.stringify(await redis.xrange(key, '-', '+')));
      }
      cursor = next;
      if (cursor === '0') break;
    }
  } finally {
    redis.disconnect();
  }
  expect(keys).toBeGreaterThan(5);
  expect(found).toEqual([]);
});
