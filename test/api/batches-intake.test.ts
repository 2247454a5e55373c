import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { until } from '../setup/wait.ts';

const q = sql.type(z.record(z.string(), z.any()));

let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack({ env: { ORG_MAX_PENDING: '50', INTERACTIVE_QUIET_MS: '0' } });
  org = await stack.createOrg({ units: 100 });
});
afterAll(async () => stack?.close());

const upload = (token: string, body: unknown) => stack.api('POST', '/v1/verify-nin/batches', { token, json: body });
const get = (token: string, path: string, headers?: Record<string, string>) => stack.api('GET', `/v1/verify-nin/batches${path}`, { token, ...(headers ? { headers } : {}) });
const done = (token: string, id: string) => until(async () => (await get(token, `/${id}`)).body, (b) => b.status === 'completed', 60_000);

describe('Batch intake', () => {
  it('When rows are malformed, then each is invalid with its reason, the rest run, and invalid rows are never charged', async () => {
    const r = await upload(org.admin.token, {
      reason: 'corporate',
      rows: [{ nin: '12345678901', client_ref: 'a' }, 'not a row', { nin: 12345678901 }, { phone_no: '0801' }, { vnin: 'AB12345678', client_ref: 'v' }, { client_ref: 'x'.repeat(101), nin: '12345678902' }],
    });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ status: 'queued', total: 6, invalid: 5, estimated_units: 0 });
    const b = await done(org.admin.token, r.body.id);
    expect(b).toMatchObject({ total: 6, done: 6, found: 1, invalid: 5, units_charged: 0 });
    const page = await get(org.admin.token, `/${r.body.id}/results`, { accept: 'application/json' });
    expect(page.status).toBe(200);
    expect(page.body.next_cursor).toBeNull();
    expect(page.body.data.map((d: { status: string; detail: string | null }) => [d.status, d.detail])).toEqual([
      ['found', null],
      ['invalid', 'row must be an object'],
      ['invalid', 'nin must be a string'],
      ['invalid', 'phone_no must be a Nigerian number of 11 digits starting with 0'],
      ['invalid', 'vnin must be 16 letters and digits'],
      ['invalid', 'client_ref must be at most 100 characters'],
    ]);
    expect(page.body.data[0]).toMatchObject({ row: 1, client_ref: 'a', fname: 'Adaeze', reference_id: expect.stringMatching(/^REF-/) });
  });

  it('When the whole request is wrong, then 400, 413, 415 or 422, and nothing is stored', async () => {
    const before = await stack.db.oneFirst(q`SELECT count(*)::int AS n FROM verification_batches`);
    expect((await upload(org.admin.token, { reason: 'corporate', rows: [] })).status).toBe(400);
    expect((await upload(org.admin.token, { reason: 'no-such-reason', rows: [{ nin: '12345678901' }] })).body.detail).toBe('Invalid reason: use a key from GET /v1/nimc-reasons');
    expect((await upload(org.admin.token, { rows: [{ nin: '12345678901' }] })).status).toBe(422);
    const tooMany = await upload(org.admin.token, { reason: 'corporate', rows: Array.from({ length: 50_001 }, () => ({})) });
    expect(tooMany.status).toBe(413);
    const form = await stack.api('POST', '/v1/verify-nin/batches', { token: org.admin.token, raw: 'nin=1', contentType: 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
    const big = await stack.api('POST', '/v1/verify-nin/batches?reason=corporate', { token: org.admin.token, raw: `nin\r\n${'12345678901\r\n'.repeat(900_000)}`, contentType: 'text/csv' });
    expect(big.status).toBe(413);
    const noHeader = await stack.api('POST', '/v1/verify-nin/batches?reason=corporate', { token: org.admin.token, raw: 'foo,bar\r\n1,2\r\n', contentType: 'text/csv' });
    expect(noHeader.status).toBe(400);
    const broken = await stack.api('POST', '/v1/verify-nin/batches?reason=corporate', { token: org.admin.token, raw: 'nin\r\n"123\r\n', contentType: 'text/csv' });
    expect(broken.status).toBe(400);
    expect(await stack.db.oneFirst(q`SELECT count(*)::int AS n FROM verification_batches`)).toBe(before);
  });

  it('When a CSV row names its own reason, then that reason is used; without one, ?reason= applies; with neither, the row is invalid', async () => {
    const text = 'nin,reason,client_ref\r\n12345678901,nyscCheck,own\r\n12345678902,,default\r\n';
    const r = await stack.api('POST', '/v1/verify-nin/batches?reason=corporate', { token: org.member.token, raw: text, contentType: 'text/csv' });
    expect(r.status).toBe(202);
    await done(org.member.token, r.body.id);
    const reasons = await stack.db.anyFirst(q`SELECT reason FROM verifications WHERE batch_id = ${r.body.id} ORDER BY batch_lookup`);
    expect(reasons).toEqual(['nyscCheck', 'corporate']);
    const none = await stack.api('POST', '/v1/verify-nin/batches', { token: org.member.token, raw: 'nin\r\n12345678901\r\n', contentType: 'text/csv' });
    expect(none.status).toBe(202);
    expect(none.body).toMatchObject({ total: 1, invalid: 1 });
    expect((await get(org.member.token, `/${none.body.id}`)).body).toMatchObject({ status: 'completed', invalid: 1, done: 1 });
  });

  it('When a batch would take the organisation past ORG_MAX_PENDING, then it is refused whole with 429 org_pending_cap', async () => {
    const o = await stack.createOrg({ units: 0 });
    // No units: the first batch pauses with its rows waiting, and they count.
    const first = await upload(o.admin.token, { reason: 'corporate', rows: Array.from({ length: 40 }, (_, i) => ({ nin: `3${String(i).padStart(10, '0')}` })) });
    expect(first.status).toBe(202);
    await until(async () => (await get(o.admin.token, `/${first.body.id}`)).body, (b) => b.status === 'paused');
    const second = await upload(o.admin.token, { reason: 'corporate', rows: Array.from({ length: 11 }, (_, i) => ({ nin: `4${String(i).padStart(10, '0')}` })) });
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({ code: 'org_pending_cap' });
    const fits = await upload(o.admin.token, { reason: 'corporate', rows: Array.from({ length: 10 }, (_, i) => ({ nin: `4${String(i).padStart(10, '0')}` })) });
    expect(fits.status).toBe(202);
    // Cancelled rows end: room again.
    expect((await stack.api('POST', `/v1/verify-nin/batches/${first.body.id}/cancel`, { token: o.admin.token })).body).toMatchObject({ status: 'cancelled', cancelled: 40, done: 40 });
    expect((await upload(o.admin.token, { reason: 'corporate', rows: [{ nin: '12345678901' }] })).status).toBe(202);
  });

  it("When another organisation's batch id is used, then every batch endpoint answers 404 as for an unknown id", async () => {
    const r = await upload(org.admin.token, { reason: 'corporate', rows: [{ nin: '12345678901' }] });
    const other = await stack.createOrg();
    for (const id of [r.body.id, 'BAT-AAAAAAAAAAAA', 'nonsense']) {
      expect((await get(other.admin.token, `/${id}`)).status).toBe(404);
      expect((await get(other.admin.token, `/${id}/results`)).status).toBe(404);
      expect((await get(other.admin.token, `/${id}/results`, { accept: 'application/json' })).status).toBe(404);
      const c = await stack.api('POST', `/v1/verify-nin/batches/${id}/cancel`, { token: other.admin.token });
      expect(c.status).toBe(404);
      expect(c.body).toEqual({ detail: 'Batch not found' });
    }
    expect((await get(other.admin.token, '')).body).toEqual({ data: [], next_cursor: null });
  });

  it('When an organisation has several batches, then the list pages through them newest first', async () => {
    const o = await stack.createOrg();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await upload(o.member.token, { reason: 'corporate', rows: [{ nin: '99999999999' }] })).body.id);
    const p1 = await get(o.member.token, '?limit=2');
    expect(p1.body.data.map((b: { id: string }) => b.id)).toEqual([ids[2], ids[1]]);
    const p2 = await get(o.member.token, `?limit=2&cursor=${p1.body.next_cursor}`);
    expect(p2.body).toEqual({ data: [expect.objectContaining({ id: ids[0], total: 1 })], next_cursor: null });
    expect((await get(o.member.token, '?cursor=abc')).status).toBe(400);
  });
});
