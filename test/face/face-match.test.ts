import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { sql } from 'slonik';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { jobIds, QUEUES, queuePrefix } from '../../src/jobs/catalog.ts';
import { until } from '../setup/wait.ts';
import { z } from 'zod';
import { startStack, type Stack } from '../setup/harness.ts';

/**
 * Face match through the API, a face worker and the identity simulator's portraits:
 * every selfie refusal, a match and a mismatch, what each outcome costs in the ledger, match_only.
 */
const FACES = 'src/simulators/identity-authority/faces/';
const hopperSelfie = readFileSync(`${FACES}grace-hopper.selfie.jpg`);
const collinsSelfie = readFileSync(`${FACES}eileen-collins.selfie.jpg`);
const HOPPER_NIN = '70000000001';
const consent = () => ({ obtained_at: new Date().toISOString(), channel: 'mobile', notice_version: 'privacy-2026-03' });

const ledgerRow = z.object({ kind: z.string(), units_delta: z.coerce.number(), reference: z.string().nullable() });
const walletRow = z.object({ units: z.coerce.number(), reserved: z.coerce.number() });

let stack: Stack;
const ledger = (orgId: number) => stack.db.any(sql.type(ledgerRow)`SELECT kind, units_delta, reference FROM wallet_transactions WHERE org_id = ${orgId} AND kind <> 'adjustment' ORDER BY id`);
const wallet = (orgId: number) => stack.db.one(sql.type(walletRow)`SELECT units, reserved FROM wallets WHERE org_id = ${orgId}`);
const verificationCount = (orgId: number) => stack.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM verifications WHERE org_id = ${orgId}`);
const face = (token: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
  stack.api('POST', '/v1/verify-nin/face', { token, json: { reason: 'corporate', consent: consent(), ...body }, ...(headers ? { headers } : {}) });

beforeAll(async () => {
  stack = await startStack({ face: true });
  // The first verification may fetch the authority's reasons list; a fixture call does it now, so
  // the refusal tests count lookups only.
  const warm = await stack.createOrg();
  await stack.api('POST', '/v1/verify-nin', { token: warm.member.token, json: { nin: '12345678901', reason: 'corporate' } });
}, 60_000);
afterAll(async () => stack?.close());

describe('selfie refusals', () => {
  const cases: [string, () => Promise<Buffer>][] = [
    ['selfie_unreadable', async () => Buffer.from('this is not an image at all')],
    ['selfie_no_face', () => sharp({ create: { width: 320, height: 320, channels: 3, background: '#8a8a8a' } }).jpeg().toBuffer()],
    ['selfie_face_too_small', () => sharp(`${FACES}grace_hopper.jpg`).resize({ width: 120 }).jpeg().toBuffer()],
    [
      'selfie_many_faces',
      async () =>
        sharp({ create: { width: 800, height: 458, channels: 3, background: '#8a8a8a' } })
          .composite([{ input: hopperSelfie, left: 0, top: 0 }, { input: await sharp(collinsSelfie).resize({ width: 380 }).toBuffer(), left: 410, top: 0 }])
          .jpeg()
          .toBuffer(),
    ],
  ];
  for (const [code, image] of cases) {
    it(`When the selfie is refused as ${code}, then 422 names it, nothing is looked up, recorded or charged`, async () => {
      const org = await stack.createOrg({ units: 5 });
      const calls = stack.identitySim.stats().calls;
      const r = await face(org.member.token, { nin: HOPPER_NIN, selfie: (await image()).toString('base64') });
      expect(r.status, r.text).toBe(422);
      expect(r.body.code).toBe(code);
      expect(stack.identitySim.stats().calls).toBe(calls);
      expect(await verificationCount(org.orgId)).toBe(0);
      expect(await ledger(org.orgId)).toEqual([]);
      expect(await wallet(org.orgId)).toEqual({ units: 5, reserved: 0 });
    });
  }

  it('When the selfie is over 2 MiB decoded, then 413; without consent, 400; with both nin and vnin, 400', async () => {
    const org = await stack.createOrg({ units: 5 });
    const big = await face(org.member.token, { nin: HOPPER_NIN, selfie: Buffer.alloc(2 * 1024 * 1024 + 1, 7).toString('base64') });
    expect(big.status).toBe(413);
    const noConsent = await stack.api('POST', '/v1/verify-nin/face', { token: org.member.token, json: { nin: HOPPER_NIN, reason: 'corporate', selfie: hopperSelfie.toString('base64') } });
    expect(noConsent.status).toBe(400);
    const both = await face(org.member.token, { nin: HOPPER_NIN, vnin: 'AA000000000001ZZ', selfie: hopperSelfie.toString('base64') });
    expect(both.status).toBe(400);
    expect(await verificationCount(org.orgId)).toBe(0);
  });
});

describe('match, mismatch and charging', () => {
  it('When Grace Hopper\'s selfie is sent with her NIN, then it matches and 2 units are debited (1 lookup + 1 face_match)', async () => {
    const org = await stack.createOrg({ units: 5 });
    const r = await face(org.member.token, { nin: HOPPER_NIN, selfie: `data:image/jpeg;base64,${hopperSelfie.toString('base64')}` });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.fname).toBe('Grace');
    expect(r.body.face).toMatchObject({ status: 'compared', match: true, threshold: 75, liveness: 'not_checked' });
    expect(r.body.face.confidence).toBeGreaterThanOrEqual(75);
    expect(r.body.face.model).toMatch(/face-api 1\.7\.15/);
    const ref = r.body.data.reference_id;
    expect(await ledger(org.orgId)).toEqual([
      { kind: 'verification', units_delta: -1, reference: ref },
      { kind: 'face_match', units_delta: -1, reference: ref },
    ]);
    expect(await wallet(org.orgId)).toEqual({ units: 3, reserved: 0 });
    // The ledger lists and filters the face_match line, and the day's usage counts both units.
    const lines = await stack.api('GET', '/v1/transactions?kind=face_match', { token: org.admin.token });
    expect(lines.status, lines.text).toBe(200);
    expect(lines.body.data.map((l: { reference: string; units_delta: number; username: string | null }) => [l.reference, l.units_delta, l.username])).toEqual([[ref, -1, org.member.username]]);
    // The line says why a face match costs more than a lookup.
    expect(lines.body.data[0].description).toBe("NIN verification with face match (2 units: lookup 1 + face 1): the face comparison's 1");
    const usage = await stack.api('GET', '/v1/usage/daily?days=1', { token: org.admin.token });
    expect(usage.status, usage.text).toBe(200);
    expect(usage.body.data.at(-1)).toMatchObject({ units: 2, verifications: 1 });
    // The requery answers the same comparison, from the sealed row.
    const again = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } });
    expect(again.status).toBe(200);
    expect(again.body.face).toEqual(r.body.face);
    const history = await stack.api('GET', '/v1/verifications?kind=face', { token: org.admin.token });
    expect(history.status, history.text).toBe(200);
    expect(history.body.data.map((v: { reference_id: string }) => v.reference_id)).toContain(ref);
  });

  it('When Eileen Collins\'s selfie is sent with Grace Hopper\'s NIN, then it does not match, and it still costs 2 units', async () => {
    const org = await stack.createOrg({ units: 5 });
    const r = await face(org.member.token, { nin: HOPPER_NIN, selfie: collinsSelfie.toString('base64') });
    expect(r.status, r.text).toBe(200);
    expect(r.body.face).toMatchObject({ status: 'compared', match: false });
    expect(r.body.face.confidence).toBeLessThan(75);
    expect((await ledger(org.orgId)).map((l) => l.units_delta)).toEqual([-1, -1]);
  });

  it('When the record\'s photo shows no face, then face.status is no_reference_photo and 1 unit is debited', async () => {
    const org = await stack.createOrg({ units: 5 });
    // An ordinary simulated person: the simulator's 8x8 placeholder photo (or none).
    const r = await face(org.member.token, { nin: '23456789012', selfie: hopperSelfie.toString('base64') });
    expect(r.status, r.text).toBe(200);
    expect(r.body.face).toMatchObject({ status: 'no_reference_photo', match: null, confidence: null });
    expect(await ledger(org.orgId)).toEqual([{ kind: 'verification', units_delta: -1, reference: r.body.data.reference_id }]);
  });

  it('When the NIN is not found, then 404 and nothing is charged', async () => {
    const org = await stack.createOrg({ units: 5 });
    const r = await face(org.member.token, { nin: '01234567890', selfie: hopperSelfie.toString('base64') });
    expect(r.status, r.text).toBe(404);
    expect(await ledger(org.orgId)).toEqual([]);
    expect(await wallet(org.orgId)).toEqual({ units: 5, reserved: 0 });
  });

  it('When the wallet holds fewer than FACE_MATCH_UNITS, then 402 before anything is asked', async () => {
    const org = await stack.createOrg({ units: 1 });
    const r = await face(org.member.token, { nin: HOPPER_NIN, selfie: hopperSelfie.toString('base64') });
    expect(r.status, r.text).toBe(402);
    expect(await verificationCount(org.orgId)).toBe(0);
  });

  it('When match_only is true, then data is {reference_id} alone and the stored verification keeps no record', async () => {
    const org = await stack.createOrg({ units: 5 });
    const r = await face(org.member.token, { nin: HOPPER_NIN, selfie: hopperSelfie.toString('base64'), match_only: true });
    expect(r.status, r.text).toBe(200);
    expect(Object.keys(r.body.data)).toEqual(['reference_id']);
    expect(r.body.face.match).toBe(true);
    const again = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: r.body.data.reference_id } });
    expect(again.body.data).toEqual({ reference_id: r.body.data.reference_id });
    expect(again.body.face).toEqual(r.body.face);
  });

  it('When the fixture NIN 12345678903 (a real portrait) is matched beside other fixture lookups, then it works with no units and no subscription, free, and its requery answers its record, photo included, as stored', async () => {
    const org = await stack.createOrg({ units: 0, subscription: false });
    // Other fixture rows are written in shared statements; the face match's record, with its photo, alone.
    const [r, ...others] = await Promise.all([
      face(org.member.token, { nin: '12345678903', selfie: hopperSelfie.toString('base64') }),
      ...Array.from({ length: 4 }, () => stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '12345678901', reason: 'corporate' } })),
    ]);
    expect(r!.status, r!.text).toBe(200);
    expect(others.map((o) => o.status)).toEqual([200, 200, 200, 200]);
    expect(r!.body.face).toMatchObject({ status: 'compared', match: true });
    expect(r!.body.data.image.length).toBeGreaterThan(8 * 1024);
    const again = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: r!.body.data.reference_id } });
    expect(again.body.data).toEqual(r!.body.data);
    expect((await ledger(org.orgId)).map((l) => [l.kind, l.units_delta])).toEqual(Array.from({ length: 5 }, () => ['fixture_verification', 0]));
  });
});

describe('Idempotency-Key', () => {
  it('When a face match is sent again with its Idempotency-Key, then the first answer is replayed and charged once; another selfie with the key is a 409', async () => {
    const org = await stack.createOrg({ units: 5 });
    const key = { 'Idempotency-Key': `face-${org.orgId}-0001` };
    // The same request: the same consent statement too (another one would be another request).
    const same = { nin: HOPPER_NIN, selfie: hopperSelfie.toString('base64'), consent: consent() };
    const first = await face(org.member.token, same, key);
    expect(first.status, first.text).toBe(200);
    const again = await face(org.member.token, same, key);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await ledger(org.orgId)).map((l) => l.units_delta)).toEqual([-1, -1]);
    const other = await face(org.member.token, { ...same, selfie: collinsSelfie.toString('base64') }, key);
    expect(other.status, other.text).toBe(409);
    expect(await verificationCount(org.orgId)).toBe(1);
  });
});

describe('the organisation\'s threshold', () => {
  it('When an administrator sets face_match_threshold to 10, then a mismatch at confidence 20 matches and the answer says 10', async () => {
    const org = await stack.createOrg({ units: 5 });
    const set = await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: { face_match_threshold: 10 } });
    expect(set.status, set.text).toBe(200);
    expect(set.body.face_match_threshold).toBe(10);
    expect((await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: { face_match_threshold: 101 } })).status).toBe(400);
    const r = await face(org.member.token, { nin: HOPPER_NIN, selfie: collinsSelfie.toString('base64') });
    expect(r.status, r.text).toBe(200);
    expect(r.body.face.confidence).toBeGreaterThanOrEqual(10);
    expect(r.body.face).toMatchObject({ status: 'compared', match: true, threshold: 10 });
  });
});

describe('API clients', () => {
  it('When an API client with the verify scope sends a face match, then it is answered; without the scope, 403', async () => {
    const org = await stack.createOrg({ units: 5 });
    const client = async (scopes: string[]) => {
      const c = await stack.api('POST', '/v1/api-clients', { token: org.admin.token, json: { name: `face-${scopes.join('-')}`, role: 'member', scopes } });
      expect(c.status, c.text).toBe(201);
      const t = await stack.api('POST', '/v1/login', { form: { grant_type: 'client_credentials', client_id: c.body.client_id, client_secret: c.body.client_secret } });
      return t.body.access_token as string;
    };
    const ok = await face(await client(['verify']), { nin: '12345678903', selfie: hopperSelfie.toString('base64') });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.face.match).toBe(true);
    const refused = await face(await client(['requery']), { nin: '12345678903', selfie: hopperSelfie.toString('base64') });
    expect(refused.status).toBe(403);
  });
});

describe('turns between organisations', () => {
  it('When one organisation has 6 face matches queued and another sends one, then the other\'s is answered among the first four, not after the six', async () => {
    const a = await stack.createOrg();
    const b = await stack.createOrg();
    const order: string[] = [];
    const statuses: number[] = [];
    const send = (org: { member: { token: string } }, label: string) =>
      face(org.member.token, { nin: '12345678903', selfie: hopperSelfie.toString('base64') }).then((r) => {
        statuses.push(r.status);
        order.push(label);
      });
    const queue = new Queue(QUEUES.face, { connection: { url: inject('redisUrl') }, prefix: queuePrefix(stack.config.REDIS_PREFIX, QUEUES.face) });
    try {
      const first = Array.from({ length: 6 }, (_, i) => send(a, `a${i}`));
      // Organisation B asks once A's six selfie checks are in the queue (one of them may be running).
      await until(() => queue.getJobCounts('prioritized', 'waiting', 'active'), (c) => (c.prioritized ?? 0) + (c.waiting ?? 0) + (c.active ?? 0) >= 6, 20_000);
      await Promise.all([...first, send(b, 'b')]);
    } finally {
      await queue.close();
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200]);
    expect(order.indexOf('b')).toBeLessThan(4);
  }, 90_000);
});

describe('readiness', () => {
  it('When a face worker has loaded its model, then /readyz says face: ready', async () => {
    const r = await stack.api('GET', '/readyz');
    expect(r.status).toBe(200);
    expect(r.body.face).toBe('ready');
  });
});

describe('sandbox', () => {
  it('When GET /sandbox/faces is asked, then each portrait comes with its NIN, subject, licence, source and a selfie', async () => {
    const r = await fetch(`${stack.identitySim.url}/sandbox/faces`);
    const body = (await r.json()) as { data: { nin: string; subject: string; licence: string; source: string; selfie: string }[] };
    expect(body.data.map((f) => [f.nin, f.subject])).toEqual([[HOPPER_NIN, 'Grace Hopper'], ['70000000002', 'Eileen Collins']]);
    for (const f of body.data) {
      expect(f.licence).toMatch(/public domain/i);
      expect(Buffer.from(f.selfie, 'base64').subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    }
  });
});

describe('Prefer: respond-async', () => {
  const eventRow = z.object({ type: z.string(), body: z.string() });
  const eventsOf = (orgId: number) => stack.db.any(sql.type(eventRow)`SELECT type, body FROM webhook_events WHERE org_id = ${orgId} ORDER BY created_at`);
  const requery = (token: string, ref: string) => stack.api('POST', '/v1/verify-nin/requery', { token, json: { reference_id: ref } });

  it('When a face match is sent with Prefer: respond-async, then 202 with the reference; the requery answers the comparison once done, verification.completed is recorded, 2 units are charged, the job and its selfie leave Redis, and its Idempotency-Key replays', async () => {
    const org = await stack.createOrg({ units: 5 });
    const hook = await stack.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url: 'http://127.0.0.1:9/face-hook', events: ['verification.completed'] } });
    expect(hook.status, hook.text).toBe(201);
    const key = { 'Idempotency-Key': `face-async-${org.orgId}`, Prefer: 'respond-async' };
    const same = { nin: HOPPER_NIN, selfie: hopperSelfie.toString('base64'), consent: consent() };
    const r = await face(org.member.token, same, key);
    expect(r.status, r.text).toBe(202);
    expect(r.headers.get('preference-applied')).toBe('respond-async');
    const ref = r.body.reference_id as string;
    expect(ref).toMatch(/^REF-/);
    const done = await until(() => requery(org.member.token, ref), (a) => a.status !== 202, 30_000);
    expect(done.status, done.text).toBe(200);
    expect(done.body.data.fname).toBe('Grace');
    expect(done.body.face).toMatchObject({ status: 'compared', match: true, threshold: 75, liveness: 'not_checked' });
    expect(done.body.face.confidence).toBeGreaterThanOrEqual(75);
    expect(await ledger(org.orgId)).toEqual([
      { kind: 'verification', units_delta: -1, reference: ref },
      { kind: 'face_match', units_delta: -1, reference: ref },
    ]);
    const events = (await eventsOf(org.orgId)).map((e) => [e.type, JSON.parse(e.body).data]);
    expect(events).toEqual([['verification.completed', { reference_id: ref, kind: 'face', status: 'found', verdict: 'verified', verdict_reasons: [] }]]);
    const history = await stack.api('GET', '/v1/verifications?kind=face', { token: org.admin.token });
    expect(history.body.data.find((v: { reference_id: string }) => v.reference_id === ref)).toMatchObject({ mode: 'async', kind: 'face' });
    // The lookup job carried the sealed selfie: it is removed as it ends (the face jobs too).
    const lookups = new Queue(QUEUES.lookups, { connection: { url: inject('redisUrl') }, prefix: queuePrefix(stack.config.REDIS_PREFIX, QUEUES.lookups) });
    const faces = new Queue(QUEUES.face, { connection: { url: inject('redisUrl') }, prefix: queuePrefix(stack.config.REDIS_PREFIX, QUEUES.face) });
    try {
      await until(() => lookups.getJob(jobIds.lookup(ref)), (j) => j === undefined, 10_000);
      expect(await faces.getJob(jobIds.faceCompare(ref))).toBeUndefined();
      expect(await faces.getJob(jobIds.faceCheck(ref))).toBeUndefined();
    } finally {
      await Promise.all([lookups.close(), faces.close()]);
    }
    // The same request with its key: the verification's answer, charged once.
    const again = await face(org.member.token, same, key);
    expect(again.status, again.text).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.face).toEqual(done.body.face);
    expect((await ledger(org.orgId)).length).toBe(2);
    expect(await verificationCount(org.orgId)).toBe(1);
  }, 60_000);

  it('When an asynchronous face match is sent a selfie without a face, then 422 at once, nothing recorded; a fixture NIN is 202, its requery answers the comparison and verification.completed is recorded', async () => {
    const org = await stack.createOrg({ units: 5 });
    const hook = await stack.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url: 'http://127.0.0.1:9/face-fixture', events: ['verification.completed'] } });
    expect(hook.status, hook.text).toBe(201);
    const blank = await sharp({ create: { width: 320, height: 320, channels: 3, background: '#8a8a8a' } }).jpeg().toBuffer();
    const refused = await face(org.member.token, { nin: HOPPER_NIN, selfie: blank.toString('base64') }, { Prefer: 'respond-async' });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body.code).toBe('selfie_no_face');
    expect(await verificationCount(org.orgId)).toBe(0);
    const fx = await face(org.member.token, { nin: '12345678903', selfie: hopperSelfie.toString('base64'), match_only: true }, { Prefer: 'respond-async' });
    expect(fx.status, fx.text).toBe(202);
    const answer = await requery(org.member.token, fx.body.reference_id);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.data).toEqual({ reference_id: fx.body.reference_id });
    expect(answer.body.face).toMatchObject({ status: 'compared', match: true });
    // Every verification answered asynchronously reports its end, a fixture's too (the refusal was answered at once).
    const events = (await eventsOf(org.orgId)).map((e) => [e.type, JSON.parse(e.body).data]);
    expect(events).toEqual([['verification.completed', { reference_id: fx.body.reference_id, kind: 'face', status: 'found', verdict: 'verified', verdict_reasons: [] }]]);
  });

  it('When an asynchronous face match\'s selfie does not match, then the requery says so (match_only: no record) and it costs 2 units as a synchronous one', async () => {
    const org = await stack.createOrg({ units: 5 });
    const r = await face(org.member.token, { nin: HOPPER_NIN, selfie: collinsSelfie.toString('base64'), match_only: true }, { Prefer: 'respond-async' });
    expect(r.status, r.text).toBe(202);
    const done = await until(() => requery(org.member.token, r.body.reference_id), (a) => a.status !== 202, 30_000);
    expect(done.status, done.text).toBe(200);
    expect(done.body.data).toEqual({ reference_id: r.body.reference_id });
    expect(done.body.face).toMatchObject({ status: 'compared', match: false });
    expect((await ledger(org.orgId)).map((l) => l.units_delta)).toEqual([-1, -1]);
  }, 60_000);
});

describe('data-subject requests', () => {
  const run = promisify(execFile);
  const admin = async (...args: string[]): Promise<{ stdout: string; json: any }> => {
    const env = { ...process.env, DATABASE_URL: stack.config.DATABASE_URL, SUBJECT_HASH_KEY: stack.config.SUBJECT_HASH_KEY, LOG_LEVEL: 'silent' };
    const r = await run(process.execPath, ['src/cli/admin.ts', ...args], { env });
    return { stdout: r.stdout, json: JSON.parse(r.stdout.trim().split('\n').at(-1)!) };
  };
  const q = sql.type(z.record(z.string(), z.any()));

  it('When a person matched by face is exported, then the face verification is listed with its record, comparison as stored and verdict, no selfie; erased, then both are gone and it is reported', async () => {
    // Eileen Collins: a person of this test's own (erasure reaches every organisation's verifications).
    const COLLINS_NIN = '70000000002';
    const org = await stack.createOrg({ units: 5 });
    const r = await face(org.member.token, { nin: COLLINS_NIN, selfie: collinsSelfie.toString('base64') });
    expect(r.status, r.text).toBe(200);
    expect(r.body.face).toMatchObject({ status: 'compared', match: true });
    const ref = r.body.data.reference_id as string;

    const exported = await admin('subject:export', '--nin', COLLINS_NIN, '--org', String(org.orgId));
    expect(exported.json.verifications).toHaveLength(1);
    const v = exported.json.verifications[0];
    expect(v).toMatchObject({ org_id: org.orgId, reference_id: ref, kind: 'face', mode: 'sync', outcome: 'found', fixture: false, verdict: 'verified', verdict_reasons: [] });
    expect(v.face).toEqual(r.body.face);
    expect(v.record).toEqual(Object.fromEntries(Object.entries(r.body.data).filter(([k]) => k !== 'reference_id')));
    expect(v.record.nin).toBe(COLLINS_NIN);
    // The selfie was never kept, so nothing of it can be exported.
    expect(exported.stdout).not.toContain(collinsSelfie.toString('base64').slice(100, 200));

    const erased = await admin('subject:erase', '--nin', COLLINS_NIN, '--confirm');
    expect(erased.json).toEqual({ erased: 1, batch_rows_cancelled: 0, organisations: [org.orgId] });
    const row = await stack.db.one(q`SELECT status, record_enc, query_enc, subject_hash FROM verifications WHERE reference_id = ${ref}`);
    expect(row).toEqual({ status: 'expired', record_enc: null, query_enc: null, subject_hash: null });
    const again = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } });
    expect(again.status).toBe(404);
    expect(again.body.face).toBeUndefined();
    expect((await admin('subject:export', '--nin', COLLINS_NIN)).json).toEqual({ verifications: [], waiting_batch_rows: [] });
    // The ledger keeps both debits, pointing at the erased verification.
    expect((await ledger(org.orgId)).map((l) => [l.kind, l.units_delta, l.reference])).toEqual([
      ['verification', -1, ref],
      ['face_match', -1, ref],
    ]);
  });
});
