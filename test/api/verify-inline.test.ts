import { Redis } from 'ioredis';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createFairShare } from '../../src/modules/capacity/fair-share.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { startFaceWorker, type RunningFaceWorker } from '../../workers/face.ts';
import { faceConsent, faceMatchReads, HOPPER_NIN, HOPPER_SELFIE, testFaceEngine } from '../setup/face-match.ts';
import { startStack, type Stack } from '../setup/harness.ts';

// LOOKUP_INLINE is the benchmark's yardstick: the same live path with the lookup run in the API
// process. These tests hold it to the queued path's answers and bookkeeping, with no worker running.

const REF = /^REF-[A-Z0-9]{12}$/;
let stack: Stack;

const wallet = (orgId: number) => stack.db.one(sql.type(z.object({ units: z.coerce.number(), reserved: z.coerce.number() }))`SELECT units, reserved FROM wallets WHERE org_id = ${orgId}`);
const debits = (orgId: number) =>
  stack.db.anyFirst(sql.type(z.object({ reference: z.string() }))`SELECT reference FROM wallet_transactions WHERE org_id = ${orgId} AND kind = 'verification' ORDER BY id`);
const inFlight = async (orgId: number) => {
  const redis = new Redis(stack.config.REDIS_URL);
  try {
    const share = createFairShare(redis, { prefix: stack.config.REDIS_PREFIX, staleMs: 120_000, defaultLookupMs: 1000 });
    return (await share.snapshot()).get(orgId) ?? 0;
  } finally {
    redis.disconnect();
  }
};
const verifyNin = (token: string, nin: string) => stack.api('POST', '/v1/verify-nin', { token, json: { nin, reason: 'corporate' } });

const faces = testFaceEngine();
let faceWorker: RunningFaceWorker | undefined;

beforeAll(async () => {
  stack = await startStack({ workers: false, env: { LOOKUP_INLINE: 'true', FACE_NICE: '0' } });
  // A face match's comparison still goes to a face worker (in this process, with a test engine).
  faceWorker = await startFaceWorker(stack.config, createLogger({ level: 'silent' }), { engine: faces.engine });
});
afterAll(async () => {
  await faceWorker?.close();
  await stack?.close();
});

describe('live verification with the lookup run in the API process', () => {
  it('When a live NIN is found with no worker running, then 200 with the record, one debit, nothing held and the slot given back', async () => {
    const org = await stack.createOrg({ units: 3 });
    const res = await verifyNin(org.member.token, '31415926535');
    expect(res.status).toBe(200);
    expect(res.body.data.nin).toBe('31415926535');
    expect(res.body.data.reference_id).toMatch(REF);
    expect(await wallet(org.orgId)).toEqual({ units: 2, reserved: 0 });
    expect(await debits(org.orgId)).toEqual([res.body.data.reference_id]);
    expect(await inFlight(org.orgId)).toBe(0);
    const again = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: res.body.data.reference_id } });
    expect(again.status).toBe(200);
    expect(again.body.data.nin).toBe('31415926535');
  });

  it('When a face match is found, then its lookup in the API process hands the comparison to the face worker, which settles it: 200 compared, FACE_MATCH_UNITS charged once, the slot given back', async () => {
    const org = await stack.createOrg({ units: 5 });
    const res = await stack.api('POST', '/v1/verify-nin/face', { token: org.member.token, json: { nin: HOPPER_NIN, reason: 'corporate', selfie: HOPPER_SELFIE, consent: faceConsent() } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.face).toMatchObject({ status: 'compared', match: true });
    const ref = res.body.data.reference_id as string;
    const reads = faceMatchReads(() => stack.db);
    expect(await reads.verification(ref)).toEqual({ status: 'found', failure_code: null, holds_unit: false });
    expect((await reads.ledger(org.orgId)).map((l) => l.units_delta)).toEqual([-1, -(stack.config.FACE_MATCH_UNITS - 1)]);
    expect(await wallet(org.orgId)).toEqual({ units: 5 - stack.config.FACE_MATCH_UNITS, reserved: 0 });
    expect(await inFlight(org.orgId)).toBe(0);
  });

  it('When the NIN is unknown upstream, then 404 NIN not found and nothing is charged', async () => {
    const org = await stack.createOrg({ units: 2 });
    const res = await verifyNin(org.member.token, '01234567890');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'NIN not found' });
    expect(await wallet(org.orgId)).toEqual({ units: 2, reserved: 0 });
    expect(await debits(org.orgId)).toEqual([]);
    expect(await inFlight(org.orgId)).toBe(0);
  });

  it('When the upstream keeps answering 503, then 502 with the reference_id and nothing is charged', async () => {
    const org = await stack.createOrg({ units: 2 });
    const res = await verifyNin(org.member.token, '50011234567');
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ detail: 'Identity authority unavailable, nothing was charged', reference_id: expect.stringMatching(REF), code: 'upstream_unavailable' });
    expect(await wallet(org.orgId)).toEqual({ units: 2, reserved: 0 });
    expect(await debits(org.orgId)).toEqual([]);
  });

  it('When 20 live verifications race on a wallet of 5 units, then exactly 5 succeed and 15 get 402', async () => {
    const org = await stack.createOrg({ units: 5 });
    const nins = Array.from({ length: 20 }, (_, i) => `3${String(1_000_000_000 + i)}`);
    const answers = await Promise.all(nins.map((nin) => verifyNin(org.member.token, nin)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(5);
    expect(answers.filter((a) => a.status === 402).map((a) => a.body)).toEqual(Array.from({ length: 15 }, () => ({ detail: 'Insufficient units in organisation wallet' })));
    expect(await wallet(org.orgId)).toEqual({ units: 0, reserved: 0 });
    expect(await debits(org.orgId)).toHaveLength(5);
  });
});
