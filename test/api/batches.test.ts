import { parse } from 'csv-parse/sync';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../setup/harness.ts';
import { until } from '../setup/wait.ts';

const q = sql.type(z.record(z.string(), z.any()));

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ env: { INTERACTIVE_QUIET_MS: '0' } });
});
afterAll(async () => stack?.close());

const csvUpload = (token: string, text: string, query = '?reason=corporate') =>
  stack.api('POST', `/v1/verify-nin/batches${query}`, { token, raw: text, contentType: 'text/csv' });
const jsonUpload = (token: string, body: unknown) => stack.api('POST', '/v1/verify-nin/batches', { token, json: body });
const getBatch = (token: string, id: string) => stack.api('GET', `/v1/verify-nin/batches/${id}`, { token });
const wallet = (orgId: number) => stack.db.one(q`SELECT units::int, reserved::int FROM wallets WHERE org_id = ${orgId}`);
const debits = (orgId: number) => stack.db.oneFirst(q`SELECT count(*)::int AS n FROM wallet_transactions WHERE org_id = ${orgId} AND kind = 'verification'`);
const nin = (first: string, i: number) => `${first}${String(i).padStart(10, '0')}`;

async function finished(token: string, id: string, timeoutMs = 180_000) {
  return until(async () => (await getBatch(token, id)).body, (b) => b.status === 'completed' || b.status === 'cancelled', timeoutMs);
}

describe('POST /verify-nin/batches', () => {
  it('When a 2,000-row CSV batch mixes fixture, live, not-found, invalid and duplicate rows, then it completes with exact counts and only its found live rows are charged, once each', async () => {
    const org = await stack.createOrg({ units: 5000 });
    const rows: string[][] = [];
    // Fixtures (one found twice), live found, live not found, phones found, duplicates, invalid.
    rows.push(['12345678901', '', '', 'fx-1'], ['12345678902', '', '', 'fx-2'], ['99999999999', '', '', 'fx-3'], ['12345678901', '', '', 'fx-1b']);
    for (let i = 0; i < 1300; i++) rows.push([nin('3', i), '', '', `live-${i}`]);
    for (let i = 0; i < 300; i++) rows.push([nin('0', i), '', '', `gone-${i}`]);
    for (let i = 0; i < 50; i++) rows.push(['', '', `0801${String(i).padStart(7, '0')}`, `phone-${i}`]);
    for (let i = 0; i < 200; i++) rows.push([nin('3', i), '', '', `dup-${i}`]);
    const invalid = [
      ['abc', '', '', 'bad-1', 'NIN must be exactly 11 digits'],
      ['1234567890', '', '', 'bad-2', 'NIN must be exactly 11 digits'],
      [nin('3', 1), '', '08011111111', 'bad-3', 'exactly one of nin, vnin or phone_no is required'],
      ['', '', '', 'bad-4', 'exactly one of nin, vnin or phone_no is required'],
      ['', 'AB-1234567890123', '', 'bad-5', 'vnin must be 16 letters and digits'],
      ['', '', '12345', 'bad-6', 'phone_no must be a Nigerian number of 11 digits starting with 0'],
    ];
    for (let i = 0; rows.length < 2000; i++) {
      const b = invalid[i % invalid.length]!;
      rows.push([b[0]!, b[1]!, b[2]!, `${b[3]}-${i}`]);
    }
    const text = `NIN,vnin,phone_no,client_ref\r\n${rows.map((r) => r.join(',')).join('\r\n')}\r\n`;

    const r = await csvUpload(org.member.token, text);
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ id: expect.stringMatching(/^BAT-[A-Z0-9]{12}$/), status: 'queued', total: 2000, invalid: 146, estimated_units: 1650 });
    const id = r.body.id as string;

    const b = await finished(org.member.token, id);
    expect(b).toEqual({
      id,
      status: 'completed',
      paused_reason: null,
      total: 2000,
      done: 2000,
      found: 3 + 1300 + 200 + 50,
      not_found: 1 + 300,
      failed: 0,
      invalid: 146,
      cancelled: 0,
      units_charged: 1350,
      created_at: expect.any(String),
      finished_at: expect.any(String),
    });
    expect(await wallet(org.orgId)).toEqual({ units: 5000 - 1350, reserved: 0 });
    expect(await debits(org.orgId)).toBe(1350);
    // One verification per distinct identifier; every live found one debited exactly once.
    expect(await stack.db.oneFirst(q`SELECT count(*)::int AS n FROM verifications WHERE batch_id = ${id}`)).toBe(1653);
    expect(
      await stack.db.oneFirst(q`
        SELECT count(*)::int AS n FROM verifications v
        WHERE v.batch_id = ${id} AND v.status = 'found' AND NOT v.fixture
          AND (SELECT count(*) FROM wallet_transactions t WHERE t.kind = 'verification' AND t.reference = v.reference_id) <> 1`),
    ).toBe(0);

    const csv = await stack.api('GET', `/v1/verify-nin/batches/${id}/results`, { token: org.admin.token });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const out = parse(csv.text, { columns: true }) as Record<string, string>[];
    expect(Object.keys(out[0]!)).toEqual(['row', 'client_ref', 'status', 'reference_id', 'fname', 'mname', 'lname', 'dob', 'gender', 'phone', 'detail']);
    expect(out).toHaveLength(2000);
    expect(out.map((o) => Number(o.row))).toEqual(Array.from({ length: 2000 }, (_, i) => i + 1));
    expect(out[0]).toMatchObject({ client_ref: 'fx-1', status: 'found', fname: 'Adaeze', lname: 'Okonkwo', detail: '' });
    expect(out[2]).toMatchObject({ client_ref: 'fx-3', status: 'not_found', detail: 'NIN not found' });
    // A duplicate row has the first row's reference and result.
    expect(out[3]!.reference_id).toBe(out[0]!.reference_id);
    const live0 = out.find((o) => o.client_ref === 'live-0')!;
    const dup0 = out.find((o) => o.client_ref === 'dup-0')!;
    expect(live0.status).toBe('found');
    expect({ ...dup0, row: '', client_ref: '' }).toEqual({ ...live0, row: '', client_ref: '' });
    const counts = out.reduce<Record<string, number>>((acc, o) => ({ ...acc, [o.status!]: (acc[o.status!] ?? 0) + 1 }), {});
    expect(counts).toEqual({ found: 1553, not_found: 301, invalid: 146 });
    const bad = out.filter((o) => o.status === 'invalid');
    for (const o of bad) {
      const expected = invalid.find((v) => o.client_ref!.startsWith(`${v[3]}-`))![4];
      expect(o.detail).toBe(expected);
      expect(o.reference_id).toBe('');
    }
    expect(out.find((o) => o.client_ref === 'phone-0')).toMatchObject({ status: 'found' });
  }, 240_000);

  it('When the wallet runs out mid-batch, then the batch pauses with insufficient_units and resumes by itself after a top-up, charging each found row once', async () => {
    const org = await stack.createOrg({ units: 3 });
    const rows = Array.from({ length: 6 }, (_, i) => ({ nin: nin('4', i), client_ref: `c${i}` }));
    const r = await jsonUpload(org.admin.token, { reason: 'corporate', rows });
    expect(r.status).toBe(202);
    const id = r.body.id as string;
    const paused = await until(async () => (await getBatch(org.admin.token, id)).body, (b) => b.status === 'paused' && b.found === 3, 60_000);
    expect(paused).toMatchObject({ paused_reason: 'insufficient_units', done: 3, found: 3, units_charged: 3 });
    expect(await wallet(org.orgId)).toEqual({ units: 0, reserved: 0 });

    const t = await stack.api('POST', '/v1/topup/initialize', { token: org.admin.token, form: { units: 100 } });
    expect(t.status).toBe(200);
    const paid = await fetch(`${stack.paymentSim.url}/__sim/transactions/${t.body.reference}/pay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(paid.status).toBe(200);
    const done = await finished(org.admin.token, id, 60_000);
    expect(done).toMatchObject({ status: 'completed', paused_reason: null, done: 6, found: 6, units_charged: 6 });
    expect(await wallet(org.orgId)).toEqual({ units: 100 - 3, reserved: 0 });
    expect(await debits(org.orgId)).toBe(6);
  }, 90_000);

  it('When a batch is cancelled while its rows wait, then every row not started ends cancelled and no unit stays held', async () => {
    // A slow authority keeps most rows waiting while the cancel arrives (seconds of margin, not a
    // window a loaded machine could miss).
    await stack.identitySim.configure({ latencyMs: 1000 });
    try {
      const org = await stack.createOrg({ units: 1000 });
      const rows = Array.from({ length: 400 }, (_, i) => ({ nin: nin('6', i) }));
      const r = await jsonUpload(org.member.token, { reason: 'corporate', rows });
      expect(r.status).toBe(202);
      const id = r.body.id as string;
      await until(async () => (await getBatch(org.member.token, id)).body, (b) => b.status === 'running', 30_000);
      const c = await stack.api('POST', `/v1/verify-nin/batches/${id}/cancel`, { token: org.member.token });
      expect(c.status).toBe(200);
      expect(c.body.status).toBe('cancelled');
      const b = await until(async () => (await getBatch(org.member.token, id)).body, (x) => x.found + x.not_found + x.failed + x.cancelled === 400, 60_000);
      expect(b.cancelled).toBeGreaterThan(0);
      expect(b.done).toBe(400);
      await until(() => stack.db.oneFirst(q`SELECT count(*)::int AS n FROM verifications WHERE batch_id = ${id} AND status = 'pending'`), (n) => n === 0, 30_000);
      const w = await wallet(org.orgId);
      expect(w.reserved).toBe(0);
      expect(w.units).toBe(1000 - b.units_charged);
      expect(await debits(org.orgId)).toBe(b.units_charged);
    } finally {
      await stack.identitySim.configure({ latencyMs: 0 });
    }
  }, 120_000);
});
