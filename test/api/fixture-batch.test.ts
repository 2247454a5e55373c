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
    // The not-found calls have rows too: find them by their request's absence of a reference.
    const notFound = await stack.db.anyFirst(sql.type(z.object({ reference_id: z.string() }))`
      SELECT reference_id FROM verifications WHERE org_id IN (${a.orgId}, ${b.orgId}) AND status = 'not_found'`);
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

  it('When ten writes are asked at once and one names an organisation that does not exist, then two statements write them, the nine that waited are written again one by one, and only that one fails', async () => {
    let statements = 0;
    const counted = { any: (...args: Parameters<CommonQueryMethods['any']>) => (statements++, stack.db.any(...args)) } as unknown as DatabasePool;
    const now = new Date();
    const row = (orgId: number): FixtureRow => ({
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
    });
    const clientId = await stack.db.oneFirst(sql.type(z.object({ id: z.coerce.number() }))`SELECT id FROM api_clients WHERE org_id = ${a.orgId} LIMIT 1`);
    const rows = Array.from({ length: 10 }, (_, i) => ({ ...row(i === 5 ? 999_999_999 : i % 2 ? a.orgId : b.orgId), apiClientId: clientId }));
    const settled = await Promise.allSettled(rows.map((r) => writeFixture(counted, r, { inTransaction: false })));
    expect(settled.map((s) => s.status)).toEqual(rows.map((_, i) => (i === 5 ? 'rejected' : 'fulfilled')));
    expect(statements).toBe(2 + 9);
    const kept = await rowsOf(rows.map((r) => r.referenceId));
    expect(kept.map((k) => k.reference_id).sort()).toEqual(rows.filter((_, i) => i !== 5).map((r) => r.referenceId).sort());
    for (const k of kept) expect([k.lines, k.line_org]).toEqual([1, k.org_id]);
  });
});
