import { randomBytes } from 'node:crypto';
import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFixture, type FixtureRow } from '../../src/modules/verification/fixture-rows.ts';
import { newReferenceId } from '../../src/modules/verification/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// Fixture calls that arrive together share one write (verification/fixture-rows.ts): each still gets
// its own row, its own zero ledger line and its own organisation, and a call whose write fails fails alone.

let stack: Stack;
let a: OrgFixture;
let b: OrgFixture;
let clientToken: string;

beforeAll(async () => {
  stack = await startStack({ workers: false });
  a = await stack.createOrg({ units: 5 });
  b = await stack.createOrg({ units: 7 });
  const created = await stack.api('POST', '/v1/api-clients', { token: a.admin.token, json: { name: 'Fixture burst', role: 'member' } });
  expect(created.status).toBe(201);
  const grant = await stack.api('POST', '/v1/login', { form: { grant_type: 'client_credentials', client_id: created.body.client_id, client_secret: created.body.client_secret } });
  expect(grant.status).toBe(200);
  clientToken = grant.body.access_token;
});
afterAll(async () => stack?.close());

const written = z.object({
  reference_id: z.string(),
  org_id: z.coerce.number(),
  user_id: z.coerce.number().nullable(),
  api_client_id: z.coerce.number().nullable(),
  status: z.string(),
  failure_code: z.string().nullable(),
  lines: z.coerce.number(),
  line_org: z.coerce.number().nullable(),
  units_before: z.coerce.number().nullable(),
  units_after: z.coerce.number().nullable(),
  outcome: z.string().nullable(),
});

const rowsOf = (refs: readonly string[]) =>
  stack.db.any(sql.type(written)`
    SELECT v.reference_id, v.org_id, v.user_id, v.api_client_id, v.status, v.failure_code,
           (SELECT count(*) FROM wallet_transactions t WHERE t.reference = v.reference_id) AS lines,
           t.org_id AS line_org, t.units_before, t.units_after, t.details->>'outcome' AS outcome
    FROM verifications v LEFT JOIN wallet_transactions t ON t.reference = v.reference_id AND t.kind = 'fixture_verification'
    WHERE v.reference_id = ANY(${sql.array(refs, 'text')})`);

describe('Fixture calls written together', () => {
  it('When 30 fixture calls of two organisations, a user and an API client arrive at once, then each answer has its own row and one zero ledger line of its own organisation', async () => {
    const calls = Array.from({ length: 30 }, (_, i) => {
      const who = [a.member.token, clientToken, b.member.token][i % 3]!;
      const org = i % 3 === 2 ? b.orgId : a.orgId;
      const nin = ['12345678901', '12345678902', '99999999999'][i % 5 % 3]!;
      const headers: Record<string, string> = i === 7 ? { 'Idempotency-Key': `burst-${Date.now()}` } : {};
      return { who, org, nin, client: i % 3 === 1, headers };
    });
    // The other tests of this file write not-found rows of these organisations too (in any order).
    const notFoundRefs = () =>
      stack.db.anyFirst(sql.type(z.object({ reference_id: z.string() }))`
        SELECT reference_id FROM verifications WHERE org_id IN (${a.orgId}, ${b.orgId}) AND status = 'not_found'`);
    const before = new Set(await notFoundRefs());
    const answers = await Promise.all(calls.map((c) => stack.api('POST', '/v1/verify-nin', { token: c.who, json: { nin: c.nin, reason: 'corporate' }, headers: c.headers })));
    const refs: string[] = [];
    answers.forEach((r, i) => {
      const c = calls[i]!;
      expect(r.status, `call ${i}`).toBe(c.nin === '99999999999' ? 404 : 200);
      if (r.status === 200) {
        expect(r.body.data.nin).toBe(c.nin);
        refs.push(r.body.data.reference_id);
      }
    });
    // The not-found calls have rows too (their answers carry no reference): the new ones.
    const notFound = (await notFoundRefs()).filter((ref) => !before.has(ref));
    expect(notFound).toHaveLength(calls.filter((c) => c.nin === '99999999999').length);
    const rows = await rowsOf([...refs, ...notFound]);
    expect(rows).toHaveLength(30);
    for (const row of rows) {
      expect(row.lines, row.reference_id).toBe(1);
      expect(row.line_org).toBe(row.org_id);
      expect(row.outcome).toBe(row.status);
      expect([row.units_before, row.units_after]).toEqual(row.org_id === a.orgId ? [5, 5] : [7, 7]);
    }
    answers.forEach((r, i) => {
      if (r.status !== 200) return;
      const c = calls[i]!;
      const row = rows.find((x) => x.reference_id === r.body.data.reference_id)!;
      expect(row.org_id, `call ${i}`).toBe(c.org);
      expect(row.api_client_id !== null, `call ${i}`).toBe(c.client);
      expect(row.user_id !== null, `call ${i}`).toBe(!c.client);
    });
    // Each answer is also what its own organisation reads back, and another organisation does not see it.
    const first = answers.find((r, i) => r.status === 200 && calls[i]!.org === b.orgId)!;
    const requery = (token: string) => stack.api('POST', '/v1/verify-nin/requery', { token, json: { reference_id: first.body.data.reference_id } });
    const own = await requery(b.member.token);
    expect(own.status).toBe(200);
    expect(own.body.data).toEqual(first.body.data);
    expect((await requery(a.member.token)).status).toBe(404);
    const balances = await stack.db.anyFirst(sql.type(z.object({ units: z.coerce.number() }))`SELECT units FROM wallets WHERE org_id IN (${a.orgId}, ${b.orgId}) ORDER BY org_id`);
    expect(balances).toEqual(a.orgId < b.orgId ? [5, 7] : [7, 5]);
  });

  /** The pool, counting its statements; `after`: what happens once a statement has run (and committed). */
  const counted = (after: (n: number) => void = () => undefined) => {
    const c = { statements: 0, db: undefined as unknown as DatabasePool };
    c.db = {
      connect: stack.db.connect,
      any: async (...args: Parameters<CommonQueryMethods['any']>) => {
        const n = ++c.statements;
        const rows = await stack.db.any(...args);
        after(n);
        return rows;
      },
    } as unknown as DatabasePool;
    return c;
  };
  const now = new Date('2026-11-25T10:11:12.345Z');
  const row = (orgId: number, o: Partial<FixtureRow> = {}): FixtureRow => ({
    referenceId: newReferenceId(),
    orgId,
    userId: null,
    apiClientId: null,
    mode: 'nin',
    reason: 'corporate',
    status: 'found',
    failureCode: null,
    queryEnc: randomBytes(48),
    recordEnc: randomBytes(300),
    consent: null,
    keyId: 'k1',
    subjectHash: randomBytes(32),
    requestId: null,
    createdAt: now,
    expiresAt: new Date(now.getTime() + 86_400_000),
    ...o,
  });
  const clientOfA = () => stack.db.oneFirst(sql.type(z.object({ id: z.coerce.number() }))`SELECT id FROM api_clients WHERE org_id = ${a.orgId} LIMIT 1`);

  it('When rows of every shape are written by one statement, then each column and each ledger line holds exactly its own values', async () => {
    const counter = counted();
    const clientId = await clientOfA();
    const memberId = (await stack.api('GET', '/v1/me', { token: b.member.token })).body.id as number;
    const consent = { obtained_at: '2026-11-25T09:00:00Z', channel: 'web' as const, notice_version: 'v3' };
    const rows: FixtureRow[] = [
      row(a.orgId, { apiClientId: clientId }),
      row(b.orgId, { userId: memberId, mode: 'vnin', reason: 'kyc', status: 'not_found', failureCode: 'vnin_used', recordEnc: null, subjectHash: null, consent, requestId: 'req-2', delivery: 'async', keyId: 'k2' }),
      row(a.orgId, { apiClientId: clientId, mode: 'match', reason: 'employment', requestId: 'req-3', createdAt: new Date('2026-11-25T10:11:13.001Z'), expiresAt: new Date('2027-02-23T10:11:13.001Z') }),
    ];
    // The first is written alone, the two that waited together.
    await Promise.all(rows.map((r) => writeFixture(counter.db, r)));
    expect(counter.statements).toBe(2);
    const stored = z.object({
      reference_id: z.string(), org_id: z.coerce.number(), user_id: z.coerce.number().nullable(), api_client_id: z.coerce.number().nullable(),
      mode: z.string(), reason: z.string(), fixture: z.boolean(), status: z.string(), failure_code: z.string().nullable(), holds_unit: z.boolean(),
      consent: z.unknown(), query_enc: z.instanceof(Buffer).nullable(), record_enc: z.instanceof(Buffer).nullable(), key_id: z.string().nullable(),
      subject_hash: z.instanceof(Buffer).nullable(), request_id: z.string().nullable(), created_at: z.string(), completed_at: z.string().nullable(),
      expires_at: z.string(), delivery: z.string(), batch_id: z.string().nullable(),
      line: z.object({ org_id: z.number(), kind: z.string(), amount: z.number(), units_delta: z.number(), details: z.record(z.string(), z.unknown()) }),
    });
    const kept = await stack.db.any(sql.type(stored)`
      SELECT v.reference_id, v.org_id, v.user_id, v.api_client_id, v.mode, v.reason, v.fixture, v.status, v.failure_code, v.holds_unit, v.consent,
             v.query_enc, v.record_enc, v.key_id, v.subject_hash, v.request_id,
             to_char(v.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
             to_char(v.completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS completed_at,
             to_char(v.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS expires_at, v.delivery, v.batch_id,
             (SELECT json_build_object('org_id', t.org_id, 'kind', t.kind, 'amount', t.amount, 'units_delta', t.units_delta, 'details', t.details)
              FROM wallet_transactions t WHERE t.reference = v.reference_id) AS line
      FROM verifications v WHERE v.reference_id = ANY(${sql.array(rows.map((r) => r.referenceId), 'text')})`);
    expect(kept).toHaveLength(3);
    for (const r of rows) {
      const k = kept.find((x) => x.reference_id === r.referenceId)!;
      expect(k).toEqual({
        reference_id: r.referenceId, org_id: r.orgId, user_id: r.userId, api_client_id: r.apiClientId, mode: r.mode, reason: r.reason,
        fixture: true, status: r.status, failure_code: r.failureCode, holds_unit: false, consent: r.consent,
        query_enc: r.queryEnc, record_enc: r.recordEnc, key_id: r.keyId, subject_hash: r.subjectHash, request_id: r.requestId,
        created_at: r.createdAt.toISOString(), completed_at: r.createdAt.toISOString(), expires_at: r.expiresAt.toISOString(),
        delivery: r.delivery ?? 'sync', batch_id: null,
        line: { org_id: r.orgId, kind: 'fixture_verification', amount: 0, units_delta: 0, details: { fixture: true, outcome: r.status, mode: r.mode, reason: r.reason } },
      });
    }
  });

  it('When ten writes are asked at once and one names an organisation that does not exist and another a consent PostgreSQL cannot store, then two statements write them, the nine that waited are written again each alone, and only those two fail', async () => {
    const counter = counted();
    const clientId = await clientOfA();
    const bad = new Set([5, 7]);
    const unstorable = { obtained_at: '2026-11-25T09:00:00Z', channel: 'web' as const, notice_version: 'v\ud800' };
    const rows = Array.from({ length: 10 }, (_, i) =>
      row(i === 5 ? 999_999_999 : i % 2 ? a.orgId : b.orgId, { apiClientId: clientId, ...(i === 7 ? { consent: unstorable } : {}) }),
    );
    const settled = await Promise.allSettled(rows.map((r) => writeFixture(counter.db, r)));
    expect(settled.map((s) => s.status)).toEqual(rows.map((_, i) => (bad.has(i) ? 'rejected' : 'fulfilled')));
    expect(counter.statements).toBe(2 + 9);
    const kept = await rowsOf(rows.map((r) => r.referenceId));
    expect(kept.map((k) => k.reference_id).sort()).toEqual(rows.filter((_, i) => !bad.has(i)).map((r) => r.referenceId).sort());
    for (const k of kept) expect([k.lines, k.line_org]).toEqual([1, k.org_id]);
  });

  it('When the connection is lost after a statement of several committed, then its callers fail (503-worthy), nothing is written again, and each row is there once', async () => {
    const counter = counted((n) => {
      if (n === 2) throw new Error('Connection terminated unexpectedly');
    });
    const clientId = await clientOfA();
    const rows = Array.from({ length: 4 }, () => row(a.orgId, { apiClientId: clientId }));
    const settled = await Promise.allSettled(rows.map((r) => writeFixture(counter.db, r)));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'rejected']);
    expect(counter.statements).toBe(2);
    const kept = await rowsOf(rows.map((r) => r.referenceId));
    expect(kept).toHaveLength(4);
    for (const k of kept) expect(k.lines).toBe(1);
  });
});
