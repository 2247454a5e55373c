import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../clients/typescript/src/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// Test queries read loosely typed rows; the service's own queries are the typed ones.
const q = sql.type(z.record(z.string(), z.any()));

let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack();
  org = await stack.createOrg({ units: 5 });
});
afterAll(async () => stack?.close());

const list = (token: string, query = '') => stack.api('GET', `/v1/verifications${query}`, { token });
const verify = (token: string, nin: string) => stack.api('POST', '/v1/verify-nin', { token, json: { nin, reason: 'corporate' } });

describe('GET /verifications', () => {
  it('When members and administrators have verified, then a team member sees them all, newest first, with who asked, the outcome and the charge, and no personal data', async () => {
    const found = await verify(org.admin.token, '23456789012');
    expect(found.status).toBe(200);
    const missing = await verify(org.member.token, '01234567890');
    expect(missing.status).toBe(404);
    const fixture = await verify(org.member.token, '12345678901');
    expect(fixture.status).toBe(200);

    const r = await list(org.member.token);
    expect(r.status).toBe(200);
    expect(r.body.next_cursor).toBeNull();
    const missingRef = await stack.db.oneFirst(q`SELECT reference_id FROM verifications WHERE org_id = ${org.orgId} AND status = 'not_found'`);
    expect(r.body.data).toEqual([
      { reference_id: fixture.body.data.reference_id, mode: 'sync', kind: 'nin', delivery: 'sync', batch_id: null, reason: 'corporate', status: 'found', verdict: 'verified', verdict_reasons: [], charged: false, fixture: true, username: org.member.username, api_client: null, consent: null, created_at: expect.any(String) },
      { reference_id: missingRef, mode: 'sync', kind: 'nin', delivery: 'sync', batch_id: null, reason: 'corporate', status: 'not_found', verdict: 'not_verified', verdict_reasons: ['not_found'], charged: false, fixture: false, username: org.member.username, api_client: null, consent: null, created_at: expect.any(String) },
      { reference_id: found.body.data.reference_id, mode: 'sync', kind: 'nin', delivery: 'sync', batch_id: null, reason: 'corporate', status: 'found', verdict: 'verified', verdict_reasons: [], charged: true, fixture: false, username: org.admin.username, api_client: null, consent: null, created_at: expect.any(String) },
    ]);
    // Nothing of the person: not the numbers asked about, not a field of the record found.
    const person = found.body.data as Record<string, string>;
    const personal = ['23456789012', '01234567890', '12345678901', person.fname, person.lname, person.phone, person.dob, person.image]
      .filter((v) => typeof v === 'string' && v.length > 3);
    expect(personal.length).toBeGreaterThanOrEqual(4);
    for (const v of personal) expect(r.text).not.toContain(v);
  });

  it('When a record has been erased after the retention period, then it shows as expired and still as charged', async () => {
    const o = await stack.createOrg({ units: 1 });
    const found = await verify(o.admin.token, '23456789013');
    expect(found.status).toBe(200);
    await stack.db.query(q`UPDATE verifications SET record_enc = NULL, query_enc = NULL, status = 'expired' WHERE reference_id = ${found.body.data.reference_id}`);
    const r = await list(o.member.token);
    expect(r.body.data).toEqual([expect.objectContaining({ reference_id: found.body.data.reference_id, status: 'expired', charged: true })]);
  });

  it('When status, mode, from and to are given, then only those verifications; bad values are 400', async () => {
    const o = await stack.createOrg({ units: 2 });
    await verify(o.admin.token, '23456789014');
    await verify(o.admin.token, '01234567891');
    await stack.db.query(q`UPDATE verifications SET created_at = '2026-03-01T23:30:00Z' WHERE org_id = ${o.orgId} AND status = 'not_found'`);
    const statuses = async (query: string) => (await list(o.admin.token, query)).body.data.map((v: { status: string }) => v.status);
    expect(await statuses('?status=not_found')).toEqual(['not_found']);
    expect(await statuses('?mode=phone')).toEqual([]);
    expect(await statuses('?from=2026-03-02&to=2026-03-02')).toEqual(['not_found']);
    expect(await statuses('?to=2026-03-01')).toEqual([]);
    expect((await list(o.admin.token, '?status=done')).status).toBe(400);
    expect((await list(o.admin.token, '?mode=email')).status).toBe(400);
    expect((await list(o.admin.token, '?limit=500')).status).toBe(400);
  });

  it('When the pages are walked while verifications go on, then each one that existed is seen once, in order', async () => {
    const o = await stack.createOrg();
    // Many rows within the same microsecond would be unusual; equal timestamps are the hard case for a
    // cursor, so half of them share one.
    await stack.db.query(q`
      INSERT INTO verifications (reference_id, org_id, user_id, mode, reason, fixture, status, created_at, expires_at)
      SELECT 'REF-' || lpad(g::text, 12, '0'), ${o.orgId}, (SELECT id FROM users WHERE org_id = ${o.orgId} AND role = 'member'),
             'nin', 'corporate', true, 'found',
             CASE WHEN g % 2 = 0 THEN timestamptz '2026-03-05T10:00:00.123456Z' ELSE timestamptz '2026-03-05T10:00:00Z' + g * interval '1 second' END,
             now() + interval '30 days'
      FROM generate_series(1, 33) g`);
    const expected = await stack.db.anyFirst(q`SELECT reference_id FROM verifications WHERE org_id = ${o.orgId} ORDER BY created_at DESC, reference_id DESC`);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await list(o.member.token, `?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      seen.push(...r.body.data.map((v: { reference_id: string }) => v.reference_id));
      cursor = r.body.next_cursor;
      expect((await verify(o.member.token, '12345678902')).status).toBe(200);
    } while (cursor);
    expect(seen).toEqual(expected);
    const bad = await list(o.member.token, `?cursor=${Buffer.from('["verifications","yesterday","REF-1"]').toString('base64url')}`);
    expect(bad.status).toBe(400);
  });

  it('When an anonymous caller asks, then 401; the typed client walks the pages', async () => {
    expect((await stack.api('GET', '/v1/verifications')).status).toBe(401);
    // Two verifications of its own, so there is a second page whatever ran before.
    const own = await stack.createOrg();
    for (let i = 0; i < 2; i++) expect((await verify(own.member.token, '12345678901')).status).toBe(200);
    const client = createClient({ baseUrl: stack.url, token: own.member.token });
    const page = await client.verifications({ limit: 1 });
    expect(page.data).toHaveLength(1);
    expect(page.next_cursor).toEqual(expect.any(String));
    const next = await client.verifications({ limit: 1, cursor: page.next_cursor! });
    expect(next.data[0]!.reference_id).not.toBe(page.data[0]!.reference_id);
  });
});
