import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import jwt from 'jsonwebtoken';
import { Secret, TOTP } from 'otpauth';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { signPaystackBody } from '../../src/adapters/payment-processor/signature.ts';
import { loadConfig } from '../../src/config.ts';
import { DEV_JWT_SECRET } from '../../src/config.ts';
import { keyIdOf } from '../../src/modules/auth/jwt-keys.ts';
import { findSavedCard, openSavedCard, saveCard } from '../../src/modules/topup/saved-card.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { until, waitFor } from '../setup/wait.ts';

const run = promisify(execFile);

const NEW_SECRET = 'new-signing-secret-0123456789abcdefghijklmnop';
const OLD_SECRET = 'old-signing-secret-0123456789abcdefghijklmnop';
const REMOVED_SECRET = 'removed-secret-0123456789abcdefghijklmnopqrs';
const K1 = { id: 'k1', key: Buffer.alloc(32, 1) };
const K2 = { id: 'k2', key: Buffer.alloc(32, 2) };
const spec = (...keys: { id: string; key: Buffer }[]) => keys.map((k) => `${k.id}:${k.key.toString('base64')}`).join(',');
const METRICS_TOKEN = 'metrics-token-for-key-rotation';

let stack: Stack;
let org: OrgFixture;

beforeAll(async () => {
  stack = await startStack({
    workers: false,
    env: {
      JWT_SECRETS: `${NEW_SECRET},${OLD_SECRET}`,
      ENCRYPTION_KEYS: spec(K1),
      PAYSTACK_SECRET_KEY_PREVIOUS: 'sk_test_previous_key',
      METRICS_TOKEN,
      RATE_LIMIT_PER_TOKEN: '1000',
      // No worker runs until the test starts one: a live lookup stays pending, its job queued.
      VERIFY_WAIT_MS: '800',
    },
  });
  org = await stack.createOrg({ units: 100 });
});
afterAll(async () => stack?.close());

/** The claims of a token this service issued, re-signed with another secret and key id. */
function resign(token: string, secret: string, kid?: string): string {
  const { iat: _iat, nbf: _nbf, exp: _exp, iss: _iss, jti: _jti, ...claims } = jwt.decode(token) as jwt.JwtPayload;
  const now = Math.floor(Date.now() / 1000);
  return jwt.sign({ ...claims, iat: now, nbf: now, exp: now + 600, jti: `t-${Math.random()}` }, secret, {
    algorithm: 'HS256',
    issuer: stack.config.JWT_ISSUER,
    ...(kid === undefined ? {} : { keyid: kid }),
  });
}

describe('JWT_SECRETS', () => {
  it('When a token is issued, then it carries the kid of the first secret and verifies with it', async () => {
    const header = jwt.decode(org.admin.token, { complete: true })!.header;
    expect(header.kid).toBe(keyIdOf(NEW_SECRET));
    expect(header.kid).not.toContain(NEW_SECRET.slice(0, 8));
    expect(() => jwt.verify(org.admin.token, NEW_SECRET)).not.toThrow();
  });

  it('When a token was signed under the previous secret, then it is still accepted; under a removed secret it is refused', async () => {
    const previous = resign(org.admin.token, OLD_SECRET, keyIdOf(OLD_SECRET));
    expect((await stack.api('GET', '/v1/me', { token: previous })).status).toBe(200);
    for (const token of [
      resign(org.admin.token, REMOVED_SECRET, keyIdOf(REMOVED_SECRET)),
      // A removed secret claiming a configured key id fails the signature check.
      resign(org.admin.token, REMOVED_SECRET, keyIdOf(OLD_SECRET)),
      resign(org.admin.token, REMOVED_SECRET),
    ]) {
      const r = await stack.api('GET', '/v1/me', { token });
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ detail: 'Could not validate credentials' });
    }
    // A token from before key ids (no kid) is checked with the signing secret.
    expect((await stack.api('GET', '/v1/me', { token: resign(org.admin.token, NEW_SECRET) })).status).toBe(200);
  });

  it('When the development secret is in JWT_SECRETS on a real stack, then the configuration is refused naming JWT_SECRETS; JWT_SECRET alone stays a list of one', () => {
    const real = { NODE_ENV: 'production', IDENTITY_DIALECT: 'prembly', VNIN_HASH_KEY: 'v'.repeat(40), SUBJECT_HASH_KEY: 's'.repeat(40), NIMC_ENTERPRISE_CODE: '1138183', ENCRYPTION_KEYS: spec(K2), PAYSTACK_SECRET_KEY: 'sk_live_x', IDENTITY_BASE_URL: 'https://id.example', PAYSTACK_BASE_URL: 'https://pay.example', SMTP_URL: 'smtp://mail.example' };
    expect(() => loadConfig({ ...real, JWT_SECRETS: `${NEW_SECRET},${DEV_JWT_SECRET}` })).toThrow(/JWT_SECRETS: the development secret, published in the source/);
    expect(() => loadConfig({ ...real, JWT_SECRETS: `${NEW_SECRET},short` })).toThrow(/JWT_SECRETS.1: each secret must be at least 32 characters/);
    const single = loadConfig({ ...real, JWT_SECRET: OLD_SECRET });
    expect(single.jwtSecrets).toEqual([OLD_SECRET]);
    expect(single.JWT_SECRET).toBe(OLD_SECRET);
  });
});

describe('PAYSTACK_SECRET_KEY_PREVIOUS', () => {
  it('When a webhook is signed with the previous processor key, then it is accepted; with any other key, 401', async () => {
    const body = JSON.stringify({ event: 'charge.success', data: { id: 77, reference: 'TOPUP-UNKNOWN-REF', amount: 100, currency: 'NGN', status: 'success' } });
    const post = (signature: string) =>
      stack.api('POST', '/v1/webhooks/paystack', { raw: body, contentType: 'application/json', headers: { 'x-paystack-signature': signature } });
    expect((await post(signPaystackBody(body, 'sk_test_previous_key'))).status).toBe(200);
    expect((await post(signPaystackBody(body, 'sk_test_harness_secret'))).status).toBe(200);
    const other = await post(signPaystackBody(body, 'sk_test_someone_else'));
    expect(other.status).toBe(401);
    expect(other.body).toEqual({ detail: 'Invalid signature' });
  });
});

const keyCounts = sql.type(z.object({ t: z.string(), key_id: z.string().nullable(), n: z.coerce.number() }))`
  SELECT 'verifications' AS t, key_id, count(*) AS n FROM verifications WHERE query_enc IS NOT NULL OR record_enc IS NOT NULL GROUP BY key_id
  UNION ALL SELECT 'idempotency_keys', key_id, count(*) FROM idempotency_keys WHERE response_enc IS NOT NULL GROUP BY key_id
  UNION ALL SELECT 'outbox', key_id, count(*) FROM outbox WHERE body_enc IS NOT NULL GROUP BY key_id
  UNION ALL SELECT 'user_mfa', key_id, count(*) FROM user_mfa GROUP BY key_id
  UNION ALL SELECT 'saved_cards', key_id, count(*) FROM saved_cards GROUP BY key_id`;

async function sealedRowsMetric(): Promise<string[]> {
  const r = await fetch(`${stack.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(r.status).toBe(200);
  return (await r.text()).split('\n').filter((l) => l.startsWith('sealed_rows{'));
}

describe('crypto:reencrypt', () => {
  it('When the key ring rotates and crypto:reencrypt runs while requests keep coming, then every sealed row moves to the new key and old data still reads', async () => {
    const verify = (nin: string, key?: string) =>
      stack.api('POST', '/v1/verify-nin', { token: org.admin.token, json: { nin, reason: 'corporate' }, headers: key ? { 'Idempotency-Key': key } : {} });
    const requery = (reference_id: string) => stack.api('POST', '/v1/verify-nin/requery', { token: org.admin.token, json: { reference_id } });

    // Before the rotation: records and queries, stored answers, a sealed e-mail and a TOTP secret, all under k1.
    const refs: string[] = [];
    for (let i = 0; i < 7; i++) refs.push((await verify('12345678901', `before-${i}`)).body.data.reference_id as string);
    const before = await requery(refs[0]!);
    expect(before.status).toBe(200);
    // A live lookup whose job has not run yet: its query is sealed under k1 in the row and in the job.
    const live = await verify('31415926535');
    expect(live.status).toBe(504);
    const pendingRef = live.body.reference_id as string;
    expect((await stack.api('POST', '/v1/forgot-password', { json: { username: org.admin.username } })).status).toBe(202);
    const mfaUser = org.member;
    const enrol = await stack.api('POST', '/v1/me/mfa/totp', { token: mfaUser.token });
    const totp = new TOTP({ secret: Secret.fromBase32(enrol.body.secret), algorithm: 'SHA1', digits: 6, period: 30 });
    expect((await stack.api('POST', '/v1/me/mfa/totp/confirm', { token: mfaUser.token, json: { code: totp.generate() } })).status).toBe(200);
    // Automatic top-up's saved card: the authorization code of a credited top-up.
    const cardTopup = `TOP-${org.orgId}-00000000000000aa`;
    await stack.db.query(sql.unsafe`
      INSERT INTO topups (reference, org_id, units, unit_cost_kobo, base_amount, vat_amount, service_charge, total_amount, currency, status, created_at)
      VALUES (${cardTopup}, ${org.orgId}, 100, 10000, 1000000, 75000, 10000, 1085000, 'NGN', 'pending', now())`);
    const authorization = { code: 'AUTH_k1sealed00', email: 'payer@example.com', cardType: 'visa', last4: '4081', bank: 'TEST BANK', expMonth: '12', expYear: '2030' };
    await saveCard(stack.db, stack.config.encryptionKeys, { orgId: org.orgId, reference: cardTopup, authorization, at: new Date() });
    // The reset e-mail is queued once the 202 has gone; no worker runs here, so it stays sealed in the outbox.
    await waitFor(async () => (await stack.db.any(keyCounts)).some((r) => r.t === 'outbox'), { what: 'the sealed reset e-mail in the outbox' });
    const counts = await stack.db.any(keyCounts);
    expect(new Set(counts.map((r) => r.t))).toEqual(new Set(['verifications', 'idempotency_keys', 'outbox', 'user_mfa', 'saved_cards']));
    expect(counts.every((r) => r.key_id === 'k1')).toBe(true);

    // The rotation: k2 first, k1 kept to read. Changing the ring in place is what restarting every
    // process with ENCRYPTION_KEYS=k2,k1 does, without the restart.
    stack.config.encryptionKeys.unshift(K2);
    expect((await sealedRowsMetric()).sort()).toEqual([
      'sealed_rows{table="idempotency_keys",key_id="k1",process="api"} 7',
      'sealed_rows{table="outbox",key_id="k1",process="api"} 1',
      'sealed_rows{table="saved_cards",key_id="k1",process="api"} 1',
      'sealed_rows{table="user_mfa",key_id="k1",process="api"} 1',
      'sealed_rows{table="verifications",key_id="k1",process="api"} 8',
      'sealed_rows{table="webhook_endpoints",key_id="k1",process="api"} 0',
    ]);

    const cli = run(process.execPath, ['src/cli/admin.ts', 'crypto:reencrypt', '--batch', '2'], {
      env: { ...process.env, NODE_ENV: 'test', DATABASE_URL: stack.config.DATABASE_URL, ENCRYPTION_KEYS: spec(K2, K1), LOG_LEVEL: 'silent', SANDBOX_SEED: 'false' },
    });
    // Meanwhile the service keeps verifying and reading old records (one request at a time: the
    // point is traffic during the run, not load on the test's small pool).
    const statuses: string[] = [];
    for (let i = 0; i < 6; i++) {
      for (const r of [await verify('12345678901', `during-${i}`), await requery(refs[i]!)]) statuses.push(`${r.status} ${r.status === 200 ? '' : r.text}`);
    }
    expect(statuses).toEqual(statuses.map(() => '200 '));
    const { stdout } = await cli;
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(result.key_id).toBe('k2');
    expect(result.moved).toMatchObject({ verifications: 8, idempotency_keys: 7, outbox: 1, user_mfa: 1, saved_cards: 1 });
    expect(result.remaining).toEqual([]);
    expect((await stack.db.any(keyCounts)).filter((r) => r.key_id !== 'k2')).toEqual([]);
    expect((await sealedRowsMetric()).sort()).toEqual([
      'sealed_rows{table="idempotency_keys",key_id="k1",process="api"} 0',
      'sealed_rows{table="outbox",key_id="k1",process="api"} 0',
      'sealed_rows{table="saved_cards",key_id="k1",process="api"} 0',
      'sealed_rows{table="user_mfa",key_id="k1",process="api"} 0',
      'sealed_rows{table="verifications",key_id="k1",process="api"} 0',
      'sealed_rows{table="webhook_endpoints",key_id="k1",process="api"} 0',
    ]);

    // Everything still reads: a stored answer replays, a requery answers as before, the TOTP secret signs in.
    const replay = await verify('12345678901', 'before-0');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data.reference_id).toBe(refs[0]);
    const after = await requery(refs[0]!);
    expect(after.status).toBe(200);
    expect(after.body.data).toEqual(before.body.data);
    // The queued lookup runs now, having opened its query with k1, while its row says k2: the record
    // is stored under k2, the key its row names.
    await stack.startWorkers();
    const settled = await until(() => requery(pendingRef), (r) => r.status !== 202, 20_000);
    expect(settled.status).toBe(200);
    expect(settled.body.data).toMatchObject({ nin: '31415926535', reference_id: pendingRef });
    expect(await stack.db.oneFirst(sql.type(z.object({ key_id: z.string() }))`SELECT key_id FROM verifications WHERE reference_id = ${pendingRef}`)).toBe('k2');

    // With k1 gone from the ring, records and secrets still open: nothing needs it any more.
    stack.config.encryptionKeys.splice(1);
    expect((await requery(refs[3]!)).status).toBe(200);
    expect((await requery(pendingRef)).status).toBe(200);
    expect(openSavedCard(stack.config.encryptionKeys, (await findSavedCard(stack.db, org.orgId))!)).toEqual({ authorizationCode: 'AUTH_k1sealed00', email: 'payer@example.com' });
    const login = await stack.api('POST', '/v1/login', { form: { username: mfaUser.username, password: mfaUser.password, otp: totp.generate({ timestamp: Date.now() + 30_000 }) } });
    expect(login.status).toBe(200);
    // A second run finds nothing to move.
    const again = await run(process.execPath, ['src/cli/admin.ts', 'crypto:reencrypt'], {
      env: { ...process.env, NODE_ENV: 'test', DATABASE_URL: stack.config.DATABASE_URL, ENCRYPTION_KEYS: spec(K2, K1), LOG_LEVEL: 'silent', SANDBOX_SEED: 'false' },
    });
    expect(JSON.parse(again.stdout.trim().split('\n').at(-1)!).moved).toEqual({ verifications: 0, idempotency_keys: 0, outbox: 0, user_mfa: 0, webhook_endpoints: 0, saved_cards: 0 });
  });
});
