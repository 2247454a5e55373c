import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { until } from '../setup/wait.ts';

/**
 * vNIN rows in batches, and the consent a batch states: the token waits sealed in Redis only (never
 * in PostgreSQL), is used once, and every row's verification keeps the consent its row stated.
 */
const run = promisify(execFile);
const q = sql.type(z.record(z.string(), z.any()));

let stack: Stack;
let redis: Redis;
beforeAll(async () => {
  // No quiet period after interactive lookups: these tests count what a batch decides before it
  // pauses, and a verification of another test just before (tests run shuffled) would otherwise
  // keep the feeder's queue shallow (BATCH_QUEUE_DEPTH_WHILE_INTERACTIVE) for two seconds.
  stack = await startStack({ env: { INTERACTIVE_QUIET_MS: '0' } });
  redis = new Redis(inject('redisUrl'));
});
afterAll(async () => {
  redis?.disconnect();
  await stack?.close();
});

const issue = async (nin: string) => {
  const res = await fetch(`${stack.identitySim.url}/sandbox/vnin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ nin, enterprise_code: stack.config.nimcEnterpriseCode }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { vnin: string }).vnin;
};
const upload = (org: OrgFixture, body: unknown) => stack.api('POST', '/v1/verify-nin/batches', { token: org.member.token, json: body });
const batch = async (org: OrgFixture, id: string) => (await stack.api('GET', `/v1/verify-nin/batches/${id}`, { token: org.member.token })).body;
const ended = (org: OrgFixture, id: string) => until(() => batch(org, id), (b) => b.status === 'completed' || b.status === 'cancelled', 60_000);
const paused = (org: OrgFixture, id: string) => until(() => batch(org, id), (b) => b.status === 'paused', 60_000);
const wallet = (orgId: number) => stack.db.one(q`SELECT units::int, reserved::int FROM wallets WHERE org_id = ${orgId}`);
const tokenKey = (id: string) => `${stack.config.REDIS_PREFIX}:batch-vnin:${id}`;
const consentAt = (daysAgo: number) => ({ obtained_at: new Date(Date.now() - daysAgo * 86_400_000).toISOString(), channel: 'web', notice_version: `privacy-${daysAgo}` });

async function topUp(org: OrgFixture, units: number) {
  const t = await stack.api('POST', '/v1/topup/initialize', { token: org.admin.token, form: { units } });
  expect(t.status).toBe(200);
  const paid = await fetch(`${stack.paymentSim.url}/__sim/transactions/${t.body.reference}/pay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(paid.status).toBe(200);
}

async function pgDump(): Promise<string> {
  return (await run('pg_dump', ['--no-owner', stack.config.DATABASE_URL], { maxBuffer: 256 * 1024 * 1024 })).stdout.toLowerCase();
}

function expectNoToken(text: string, tokens: string[], where: string) {
  for (const t of tokens) {
    expect(text.includes(t.toLowerCase()), `${where} holds a vNIN`).toBe(false);
    expect(text.includes(Buffer.from(t).toString('hex')), `${where} holds a vNIN's bytes`).toBe(false);
  }
}

describe('vNIN rows in batches', () => {
  it('When a batch mixes live, duplicate, fixture, used and unknown vNINs under require_consent, then each is looked up once, refusals say why, and every verification keeps its row consent', async () => {
    const org = await stack.createOrg({ units: 10 });
    expect((await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: { require_consent: true } })).status).toBe(200);
    const batchConsent = consentAt(1);
    const rowConsent = consentAt(2);
    const [live1, live2, used] = [await issue('31000000011'), await issue('31000000012'), await issue('31000000013')];
    const single = await stack.api('POST', '/v1/verify-nin/vnin', { token: org.member.token, json: { vnin: used, reason: 'corporate', consent: batchConsent } });
    expect(single.status).toBe(200);

    // Live rows without any consent: the whole batch is refused; fixture rows need none.
    const refused = await upload(org, { reason: 'corporate', rows: [{ vnin: live1 }, { vnin: 'AA000000000001ZZ' }] });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ detail: 'consent is required by your organisation' });
    expect(await redis.keys(`${stack.config.REDIS_PREFIX}:batch-vnin:*`)).toEqual([]);
    const fixtureOnly = await upload(org, { reason: 'corporate', rows: [{ vnin: 'AA000000000001ZZ' }] });
    expect(fixtureOnly.status).toBe(202);

    const r = await upload(org, {
      reason: 'corporate',
      consent: batchConsent,
      rows: [
        { vnin: live1, client_ref: 'a' },
        { vnin: live2.toLowerCase(), client_ref: 'b', consent: rowConsent },
        { vnin: live1, client_ref: 'a-dup' },
        { vnin: 'AA000000000001ZZ', client_ref: 'fx' },
        { vnin: 'AA000000000009ZZ', client_ref: 'fx-nf' },
        { vnin: used, client_ref: 'used' },
        { vnin: 'QZ123456789012XW', client_ref: 'unknown' },
        { vnin: live2, client_ref: 'bad-consent', consent: { ...rowConsent, channel: 'fax' } },
      ],
    });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ total: 8, invalid: 1, estimated_units: 4 });
    const b = await ended(org, r.body.id);
    expect(b).toMatchObject({ status: 'completed', total: 8, done: 8, found: 4, not_found: 3, failed: 0, invalid: 1, cancelled: 0, units_charged: 2 });
    expect(await wallet(org.orgId)).toEqual({ units: 10 - 1 - 2, reserved: 0 });

    const page = await stack.api('GET', `/v1/verify-nin/batches/${r.body.id}/results`, { token: org.member.token, headers: { accept: 'application/json' } });
    expect(page.status).toBe(200);
    expect(page.body.data.map((d: { client_ref: string; status: string; detail: string | null }) => [d.client_ref, d.status, d.detail])).toEqual([
      ['a', 'found', null],
      ['b', 'found', null],
      ['a-dup', 'found', null],
      ['fx', 'found', null],
      ['fx-nf', 'not_found', 'vNIN not found'],
      ['used', 'not_found', 'vNIN has already been used (a vNIN can be looked up once); ask the person for a new one'],
      ['unknown', 'not_found', 'vNIN not found'],
      ['bad-consent', 'invalid', 'consent.channel: must be one of web, mobile, in_person, ussd, other'],
    ]);
    expect(page.body.data[2].reference_id).toBe(page.body.data[0].reference_id);

    const rows = await stack.db.any(q`SELECT batch_lookup, mode, consent FROM verifications WHERE batch_id = ${r.body.id} ORDER BY batch_lookup`);
    expect(rows.map((v) => v.mode)).toEqual(['vnin', 'vnin', 'vnin', 'vnin', 'vnin', 'vnin']);
    expect(rows.map((v) => v.consent.notice_version)).toEqual(['privacy-1', 'privacy-2', 'privacy-1', 'privacy-1', 'privacy-1', 'privacy-1']);
    // History shows each row's consent, as for a single call.
    const history = await stack.api('GET', `/v1/verifications?batch_id=${r.body.id}`, { token: org.admin.token });
    expect(history.status).toBe(200);
    expect(history.body.data.find((v: { reference_id: string }) => v.reference_id === page.body.data[1].reference_id)).toMatchObject({ kind: 'vnin', mode: 'batch', consent: rowConsent });
    expect(await redis.exists(tokenKey(r.body.id))).toBe(0);
  }, 90_000);

  it('When a vNIN batch waits for units, then its tokens are sealed in Redis and nowhere in PostgreSQL; after a top-up they are used and gone', async () => {
    const org = await stack.createOrg({ units: 0 });
    const tokens = [await issue('31000000021'), await issue('31000000022')];
    const r = await upload(org, { reason: 'corporate', rows: [...tokens.map((vnin) => ({ vnin })), { vnin: 'AA000000000002ZZ' }] });
    expect(r.status).toBe(202);
    expect(await paused(org, r.body.id)).toMatchObject({ paused_reason: 'insufficient_units', found: 1, units_charged: 0 });

    const held = await redis.hgetall(tokenKey(r.body.id));
    expect(Object.keys(held).sort()).toEqual(['0', '1']);
    expectNoToken(JSON.stringify(held).toLowerCase(), tokens, 'redis');
    expectNoToken(await pgDump(), tokens, 'pg_dump');

    await topUp(org, 100);
    expect(await ended(org, r.body.id)).toMatchObject({ status: 'completed', found: 3, units_charged: 2 });
    expect(await redis.exists(tokenKey(r.body.id))).toBe(0);
    expect(await wallet(org.orgId)).toEqual({ units: 98, reserved: 0 });
    expectNoToken(await pgDump(), tokens, 'pg_dump');
  }, 90_000);

  it('When a waiting token is lost, then its row ends failed lookup_abandoned with its unit released; a cancel removes the waiting tokens', async () => {
    const org = await stack.createOrg({ units: 0 });
    const lost = await upload(org, { reason: 'corporate', rows: [{ vnin: await issue('31000000031'), client_ref: 'lost' }, { vnin: await issue('31000000032'), client_ref: 'kept' }] });
    expect(lost.status).toBe(202);
    await paused(org, lost.body.id);
    expect(await redis.hdel(tokenKey(lost.body.id), '0')).toBe(1);
    await topUp(org, 100);
    expect(await ended(org, lost.body.id)).toMatchObject({ status: 'completed', found: 1, failed: 1, units_charged: 1 });
    const page = await stack.api('GET', `/v1/verify-nin/batches/${lost.body.id}/results`, { token: org.member.token, headers: { accept: 'application/json' } });
    expect(page.body.data.map((d: { client_ref: string; status: string; detail: string }) => [d.client_ref, d.status, d.detail])).toEqual([
      ['lost', 'failed', 'lookup_abandoned'],
      ['kept', 'found', null],
    ]);
    expect(await wallet(org.orgId)).toEqual({ units: 99, reserved: 0 });

    const poor = await stack.createOrg({ units: 0 });
    const c = await upload(poor, { reason: 'corporate', rows: [{ vnin: await issue('31000000033') }, { vnin: await issue('31000000034') }] });
    await paused(poor, c.body.id);
    expect(await redis.hlen(tokenKey(c.body.id))).toBe(2);
    const cancelled = await stack.api('POST', `/v1/verify-nin/batches/${c.body.id}/cancel`, { token: poor.member.token });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', cancelled: 2, done: 2 });
    expect(await redis.exists(tokenKey(c.body.id))).toBe(0);
    expect(await wallet(poor.orgId)).toEqual({ units: 0, reserved: 0 });
  }, 90_000);
});
