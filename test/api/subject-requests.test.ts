import { createHmac } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyChain } from '../../src/modules/audit/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// Test queries read loosely typed rows; the service's own queries are the typed ones.
const q = sql.type(z.record(z.string(), z.any()));
const run = promisify(execFile);

let stack: Stack;
let a: OrgFixture;
let b: OrgFixture;
let nin: string;
const refs: { aNin: string; bPhone: string; bNotFound: string; aOther: string } = { aNin: '', bPhone: '', bNotFound: '', aOther: '' };

async function admin(...args: string[]): Promise<{ code: number; json: any }> {
  const env = { ...process.env, DATABASE_URL: stack.config.DATABASE_URL, SUBJECT_HASH_KEY: stack.config.SUBJECT_HASH_KEY, LOG_LEVEL: 'silent' };
  try {
    const r = await run(process.execPath, ['src/cli/admin.ts', ...args], { env });
    return { code: 0, json: JSON.parse(r.stdout.trim().split('\n').at(-1)!) };
  } catch (err) {
    const e = err as { code: number; stderr: string };
    const line = e.stderr.trim().split('\n')[0] ?? '';
    return { code: e.code, json: line.startsWith('{') ? JSON.parse(line) : null };
  }
}

const verify = (token: string, path: string, json: unknown) => stack.api('POST', `/v1${path}`, { token, json });
const requery = (token: string, ref: string) => stack.api('POST', '/v1/verify-nin/requery', { token, json: { reference_id: ref } });
const subjectEvents = (action: string) => stack.db.any(q`SELECT org_id::int, actor, target, details FROM audit_events WHERE action = ${action} ORDER BY id`);

beforeAll(async () => {
  stack = await startStack();
  a = await stack.createOrg({ units: 10 });
  b = await stack.createOrg({ units: 10 });
  // Organisation B finds the person by phone; A then verifies the NIN that came back.
  const byPhone = await verify(b.member.token, '/verify-nin/phone', { phone_no: '08031234567', reason: 'corporate' });
  expect(byPhone.status).toBe(200);
  nin = byPhone.body.data.nin;
  refs.bPhone = byPhone.body.data.reference_id;
  const byNin = await verify(a.member.token, '/verify-nin', { nin, reason: 'corporate' });
  expect(byNin.status).toBe(200);
  refs.aNin = byNin.body.data.reference_id;
  const nobody = await verify(b.member.token, '/verify-nin/phone', { phone_no: '07234567890', reason: 'corporate' });
  expect(nobody.status).toBe(404);
  refs.bNotFound = (await stack.db.oneFirst(q`SELECT reference_id FROM verifications WHERE org_id = ${b.orgId} AND status = 'not_found'`)) as string;
  const other = await verify(a.member.token, '/verify-nin', { nin: nin.replace(/.$/, (d) => String((Number(d) + 1) % 10)), reason: 'corporate' });
  expect(other.status).toBe(200);
  refs.aOther = other.body.data.reference_id;
});
afterAll(async () => stack?.close());

describe('data-subject requests', () => {
  it('When verifications are stored, then each keeps the HMAC of the NIN it concerns (the found record for phone lookups, none when nothing was found), never the NIN', async () => {
    const expected = createHmac('sha256', stack.config.SUBJECT_HASH_KEY).update(nin).digest();
    const rows = await stack.db.any(q`SELECT reference_id, subject_hash FROM verifications WHERE reference_id = ANY(${sql.array(Object.values(refs), 'text')})`);
    const byRef = Object.fromEntries(rows.map((r) => [r.reference_id, r.subject_hash as Buffer | null]));
    expect(byRef[refs.aNin]!.equals(expected)).toBe(true);
    expect(byRef[refs.bPhone]!.equals(expected)).toBe(true);
    expect(byRef[refs.bNotFound]).toBeNull();
    expect(byRef[refs.aOther]).toHaveLength(32);
    expect(byRef[refs.aOther]!.equals(expected)).toBe(false);
  });

  it('When an operator exports a person, then every verification at both organisations comes back with its record and verdict; with --org only that one; each organisation sees it on its trail', async () => {
    const before = (await subjectEvents('subject.exported')).length;
    const all = await admin('subject:export', '--nin', nin);
    expect(all.code).toBe(0);
    expect(Object.keys(all.json)).toEqual(['verifications', 'waiting_batch_rows']);
    expect(all.json.waiting_batch_rows).toEqual([]);
    expect(all.json.verifications.map((v: any) => [v.org_id, v.reference_id, v.kind, v.mode])).toEqual([
      [b.orgId, refs.bPhone, 'phone', 'sync'],
      [a.orgId, refs.aNin, 'nin', 'sync'],
    ]);
    for (const v of all.json.verifications) {
      expect(v).toMatchObject({ reason: 'corporate', consent: null, fixture: false, outcome: 'found', failure_code: null, verdict: 'verified', verdict_reasons: [] });
      expect(v.created_at).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(v.record.nin).toBe(nin);
    }
    const onlyA = await admin('subject:export', '--nin', nin, '--org', String(a.orgId));
    expect(onlyA.json.verifications.map((v: any) => v.reference_id)).toEqual([refs.aNin]);
    const events = (await subjectEvents('subject.exported')).slice(before);
    expect(events).toEqual([
      { org_id: Math.min(a.orgId, b.orgId), actor: 'operator', target: null, details: { verifications: 1, batch_rows: 0 } },
      { org_id: Math.max(a.orgId, b.orgId), actor: 'operator', target: null, details: { verifications: 1, batch_rows: 0 } },
      { org_id: a.orgId, actor: 'operator', target: null, details: { verifications: 1, batch_rows: 0 } },
    ]);
    expect(JSON.stringify(events)).not.toContain(nin);
    expect((await admin('subject:export', '--nin', '123')).code).toBe(1);
  });

  it('When an operator erases a person, then every stored query and record of theirs at both organisations is gone, the requery says erased, the ledger stays, and others are untouched', async () => {
    // A person of their own (this test erases them), verified by NIN at both organisations.
    const erasedNin = '21234567890';
    const mine = [];
    for (const org of [a, b]) {
      const r = await verify(org.member.token, '/verify-nin', { nin: erasedNin, reason: 'corporate' });
      expect(r.status).toBe(200);
      mine.push([org, r.body.data.reference_id as string] as const);
    }
    expect((await admin('subject:erase', '--nin', erasedNin)).code).toBe(2);
    const debits = () => stack.db.oneFirst(q`SELECT count(*)::int FROM wallet_transactions WHERE kind = 'verification' AND org_id IN (${a.orgId}, ${b.orgId})`);
    const debitsBefore = await debits();
    const eventsBefore = (await subjectEvents('subject.erased')).length;
    const erased = await admin('subject:erase', '--nin', erasedNin, '--confirm');
    expect(erased).toEqual({ code: 0, json: { erased: 2, batch_rows_cancelled: 0, organisations: [a.orgId, b.orgId].sort((x, y) => x - y) } });

    const rows = await stack.db.any(q`SELECT status, query_enc, record_enc, subject_hash FROM verifications WHERE reference_id IN (${mine[0]![1]}, ${mine[1]![1]})`);
    expect(rows.map((r) => [r.status, r.query_enc, r.record_enc, r.subject_hash])).toEqual([
      ['expired', null, null, null],
      ['expired', null, null, null],
    ]);
    for (const [org, ref] of mine) {
      const r = await requery(org.member.token, ref);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ detail: 'Record has expired and was erased under the retention policy' });
      expect((await stack.api('GET', `/v1/verify-nin/slip/${ref}`, { token: org.member.token })).status).toBe(404);
    }
    // The other person's verifications keep their records; the debits stay in the ledger.
    expect((await requery(a.member.token, refs.aNin)).status).toBe(200);
    expect((await requery(b.member.token, refs.bPhone)).status).toBe(200);
    expect(await debits()).toBe(debitsBefore);
    expect((await admin('subject:export', '--nin', erasedNin)).json).toEqual({ verifications: [], waiting_batch_rows: [] });
    const events = (await subjectEvents('subject.erased')).slice(eventsBefore);
    expect(events.map((e) => [e.org_id, e.actor, e.target, e.details])).toEqual(
      [a.orgId, b.orgId].sort((x, y) => x - y).map((id) => [id, 'operator', null, { verifications: 1, batch_rows: 0 }]),
    );
    expect((await verifyChain(stack.db)).ok).toBe(true);
  });
});
