import { readFileSync } from 'node:fs';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openJson, sealJson } from '../../src/lib/crypto.ts';
import { waitingBatchRows } from '../../src/modules/batches/index.ts';
import { exportSubject } from '../../src/modules/verification/index.ts';
import { startStack, type Stack } from '../setup/harness.ts';

/**
 * The verdict keeps the liveness rule its face match was made under: `require_liveness` is read with
 * the threshold when the comparison is made and kept, sealed, with the face result; the requery,
 * history and subject export read it from there, never from today's setting.
 */
const selfie = readFileSync('src/simulators/identity-authority/faces/grace-hopper.selfie.jpg').toString('base64');
const FIXTURE_HOPPER_NIN = '12345678903';
const consent = () => ({ obtained_at: new Date().toISOString(), channel: 'mobile', notice_version: 'privacy-2026-03' });

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ face: true });
}, 60_000);
afterAll(async () => stack?.close());

const keptRow = z.object({ record_enc: z.instanceof(Buffer), key_id: z.string() });

async function verdicts(token: string, orgId: number, ref: string) {
  const requery = await stack.api('POST', '/v1/verify-nin/requery', { token, json: { reference_id: ref } });
  expect(requery.status, requery.text).toBe(200);
  const history = await stack.api('GET', '/v1/verifications', { token });
  const row = (history.body.data as { reference_id: string; verdict: string; verdict_reasons: string[] }[]).find((r) => r.reference_id === ref)!;
  const exported = (await exportSubject({ db: stack.db, config: stack.config }, waitingBatchRows(stack.config), FIXTURE_HOPPER_NIN, orgId)).verifications.find((v) => v.reference_id === ref)!;
  return [requery.body, row, exported].map((b: { verdict: string; verdict_reasons: string[] }) => [b.verdict, b.verdict_reasons]);
}

describe('the liveness rule a face match was made under', () => {
  it('When a selfie face match was made before the organisation required liveness, then it stays verified after; one kept as made under the requirement reads not_verified liveness_not_checked everywhere', { timeout: 120_000 }, async () => {
    const org = await stack.createOrg({ units: 5 });
    const made = await stack.api('POST', '/v1/verify-nin/face', { token: org.member.token, json: { nin: FIXTURE_HOPPER_NIN, reason: 'corporate', consent: consent(), selfie } });
    expect(made.status, made.text).toBe(200);
    expect([made.body.face.liveness, made.body.verdict, made.body.verdict_reasons]).toEqual(['not_checked', 'verified', []]);
    const ref = made.body.data.reference_id as string;

    expect((await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: { require_liveness: true } })).status).toBe(200);
    expect(await verdicts(org.admin.token, org.orgId, ref)).toEqual(Array(3).fill(['verified', []]));

    // A face match compared while liveness was required keeps `liveness_required` (face-kept.ts): a
    // selfie can no longer get there (422), so the kept value is written as the comparison would.
    const row = await stack.db.one(sql.type(keptRow)`SELECT record_enc, key_id FROM verifications WHERE reference_id = ${ref}`);
    const ring = stack.config.encryptionKeys.filter((k) => k.id === row.key_id);
    const kept = openJson<Record<string, unknown>>(ring, { keyId: row.key_id, data: row.record_enc }, ref);
    expect(kept).not.toHaveProperty('liveness_required');
    const resealed = sealJson(ring, { ...kept, liveness_required: true }, ref);
    await stack.db.query(sql.unsafe`UPDATE verifications SET record_enc = ${sql.binary(resealed.data)} WHERE reference_id = ${ref}`);
    expect(await verdicts(org.admin.token, org.orgId, ref)).toEqual(Array(3).fill(['not_verified', ['liveness_not_checked']]));
  });
});
