import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/modules/organisations/index.ts';
import { adjustWallet } from '../../src/modules/wallet/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

const q = sql.type(z.record(z.string(), z.any()));
const run = promisify(execFile);

let stack: Stack;
let org: OrgFixture;
let finance: string;
let work: string;

/** The current Lagos month, and the instants it starts and ends at. */
const now = new Date();
const lagosNow = new Date(now.getTime() + 3600_000);
const month = lagosNow.toISOString().slice(0, 7);
const since = new Date(Date.UTC(lagosNow.getUTCFullYear(), lagosNow.getUTCMonth(), 1) - 3600_000);
const before = new Date(Date.UTC(lagosNow.getUTCFullYear(), lagosNow.getUTCMonth() + 1, 1) - 3600_000);
const naira = (kobo: number) => `NGN ${Math.floor(Math.abs(kobo) / 100).toLocaleString('en-US')}.${String(Math.abs(kobo) % 100).padStart(2, '0')}`;

let topup: { reference: string; base_amount: number; vat_amount: number; service_charge: number; total_amount: number };
let refundRef: string;

beforeAll(async () => {
  stack = await startStack({ env: { RATE_LIMIT_PER_TOKEN: '10000', RATE_LIMIT_PER_ORG: '10000' } });
  org = await stack.createOrg();
  const user = { username: `i34-st-fin-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
  await createUser(stack.db, { orgId: org.orgId, ...user, role: 'finance', requirePasswordChange: false });
  finance = await stack.login(user.username, user.password);
  work = mkdtempSync(join(tmpdir(), 'i34-statement-'));

  // Last month: one line, so that this month opens at 50 (the ledger's chain, written as the wallet writes it).
  await stack.db.query(sql.unsafe`
    INSERT INTO wallet_transactions (org_id, kind, amount, units_delta, units_before, units_after, details, created_at)
    VALUES (${org.orgId}, 'adjustment', 0, 50, 0, 50, '{"note": "last month"}', ${sql.timestamp(new Date(since.getTime() - 86_400_000))})`);
  await stack.db.query(sql.unsafe`UPDATE wallets SET units = 50 WHERE org_id = ${org.orgId}`);

  // This month, every kind of line through the service: live verifications, a fixture call, a top-up,
  // adjustments both ways; and a refunded payment (a retired organisation's payment is refunded, never
  // credited: its row is written here in the state the refund command leaves it).
  for (let i = 0; i < 3; i++) {
    const r = await stack.api('POST', '/v1/verify-nin', { token: org.admin.token, json: { nin: '23456789012', reason: 'corporate' } });
    expect(r.status).toBe(200);
  }
  expect((await stack.api('POST', '/v1/verify-nin', { token: org.admin.token, json: { nin: '12345678901', reason: 'corporate' } })).status).toBe(200);
  const init = await stack.api('POST', '/v1/topup/initialize', { token: finance, form: { units: 100 } });
  expect(init.status).toBe(200);
  topup = init.body;
  const paid = await fetch(`${stack.paymentSim.url}/__sim/transactions/${topup.reference}/pay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ webhook: 'none' }) });
  expect(paid.status).toBe(200);
  expect((await stack.api('POST', '/v1/topup/verify', { token: finance, form: { reference: topup.reference } })).status).toBe(200);
  await adjustWallet(stack.db, org.orgId, -5, 'goodwill correction');
  await adjustWallet(stack.db, org.orgId, 2, '=cmd|calc');
  refundRef = `TOP-${org.orgId}-${randomBytes(8).toString('hex')}`;
  await stack.db.query(sql.unsafe`
    INSERT INTO topups (reference, org_id, units, unit_cost_kobo, base_amount, vat_amount, service_charge, total_amount, status, paid_amount, refund_amount, refunded_at)
    VALUES (${refundRef}, ${org.orgId}, 100, 10000, 1000000, 75000, 26523, 1101523, 'refunded', 1101523, 1101523, now())`);
});
afterAll(async () => {
  await stack?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const statement = (token: string, m: string, accept: string) => fetch(`${stack.url}/v1/statements/${m}`, { headers: { authorization: `Bearer ${token}`, accept } });

describe('monthly statements', () => {
  it('a month with every kind of line: opening + movements = closing, each figure as the ledger has it', async () => {
    const r = await statement(finance, month, 'application/json');
    expect(r.status).toBe(200);
    const s = (await r.json()) as any;

    // The ledger, read independently: the balance before the month, after it, and the sum between.
    const ledger = await stack.db.one(q`
      SELECT (SELECT units_after::int FROM wallet_transactions WHERE org_id = ${org.orgId} AND created_at < ${sql.timestamp(since)} ORDER BY id DESC LIMIT 1) AS opening,
             (SELECT units_after::int FROM wallet_transactions WHERE org_id = ${org.orgId} AND created_at < ${sql.timestamp(before)} ORDER BY id DESC LIMIT 1) AS closing,
             (SELECT sum(units_delta)::int FROM wallet_transactions WHERE org_id = ${org.orgId} AND created_at >= ${sql.timestamp(since)} AND created_at < ${sql.timestamp(before)}) AS moved,
             (SELECT units::int FROM wallets WHERE org_id = ${org.orgId}) AS wallet`);
    expect(ledger).toEqual({ opening: 50, closing: 50 - 3 + 100 - 5 + 2, moved: -3 + 100 - 5 + 2, wallet: 144 });
    expect({ opening: s.opening_units, closing: s.closing_units, moved: s.totals.movement_units }).toEqual({ opening: ledger.opening, closing: ledger.closing, moved: ledger.moved });
    expect(s.opening_units + s.totals.movement_units).toBe(s.closing_units);
    // The lines add up to the totals, kind by kind.
    const units = (kind: string) => s.lines.filter((l: any) => l.kind === kind).reduce((n: number, l: any) => n + l.units, 0);
    expect({ v: units('verifications'), t: units('topup'), a: units('adjustment') }).toEqual({ v: -3, t: 100, a: -3 });
    expect(s.totals).toMatchObject({ verification_units: -3, topup_units: 100, adjustment_units: -3, topup_total: topup.total_amount, refund_total: 1101523 });

    const day = s.lines.find((l: any) => l.kind === 'verifications');
    expect(day).toMatchObject({ count: 3, units: -3, fixture_count: 1 });
    const invoice = await stack.db.oneFirst(q`SELECT number FROM invoices WHERE topup_reference = ${topup.reference}`);
    expect(s.lines.find((l: any) => l.kind === 'topup')).toMatchObject({
      reference: topup.reference,
      invoice,
      units: 100,
      base: topup.base_amount,
      vat: topup.vat_amount,
      fee: topup.service_charge,
      total: topup.total_amount,
    });
    expect(s.lines.filter((l: any) => l.kind === 'adjustment').map((l: any) => [l.units, l.note])).toEqual([
      [-5, 'goodwill correction'],
      [2, '=cmd|calc'],
    ]);
    expect(s.lines.find((l: any) => l.kind === 'refund')).toMatchObject({ reference: refundRef, amount: 1101523 });
  });

  it('a face match\'s comparison debit (face_match) is in the day\'s verification units, so the month still adds up', async () => {
    const other = await stack.createOrg({ units: 0 });
    const user = { username: `i34-st-face-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
    await createUser(stack.db, { orgId: other.orgId, ...user, role: 'finance', requirePasswordChange: false });
    const token = await stack.login(user.username, user.password);
    // The ledger chain as the wallet writes it: 10 in, a lookup's unit and its comparison's out.
    const at = sql.timestamp(new Date(Math.max(since.getTime() + 1000, Date.now() - 1000)));
    await stack.db.query(sql.unsafe`
      INSERT INTO wallet_transactions (org_id, kind, amount, units_delta, units_before, units_after, details, reference, created_at) VALUES
        (${other.orgId}, 'adjustment', 0, 10, 0, 10, '{"note": "start"}', NULL, ${at}),
        (${other.orgId}, 'verification', 0, -1, 10, 9, '{}', 'REF-I34FACE', ${at}),
        (${other.orgId}, 'face_match', 0, -1, 9, 8, '{}', 'REF-I34FACE', ${at})`);
    const r = await statement(token, month, 'application/json');
    expect(r.status).toBe(200);
    const s = (await r.json()) as any;
    expect({ opening: s.opening_units, closing: s.closing_units, moved: s.totals.movement_units, verification_units: s.totals.verification_units }).toEqual({ opening: 0, closing: 8, moved: 8, verification_units: -2 });
  });

  it('a line dated before the month but committed after its first lines (ids follow commits, dates the start of each transaction) still leaves opening + movements = closing', async () => {
    const other = await stack.createOrg({ units: 0 });
    const user = { username: `i34-st-edge-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
    await createUser(stack.db, { orgId: other.orgId, ...user, role: 'finance', requirePasswordChange: false });
    const token = await stack.login(user.username, user.password);
    const at = (ms: number) => sql.timestamp(new Date(since.getTime() + ms));
    // 10 in last month; then this month's -1 commits; then a credit begun a second before the month
    // commits last (the highest id, dated last month).
    await stack.db.query(sql.unsafe`
      INSERT INTO wallet_transactions (org_id, kind, amount, units_delta, units_before, units_after, details, created_at) VALUES
        (${other.orgId}, 'adjustment', 0, 10, 0, 10, '{"note": "a"}', ${at(-86_400_000)}),
        (${other.orgId}, 'adjustment', 0, -1, 10, 9, '{"note": "b"}', ${at(1000)}),
        (${other.orgId}, 'adjustment', 0, 5, 9, 14, '{"note": "c"}', ${at(-1000)})`);
    const s = (await (await statement(token, month, 'application/json')).json()) as any;
    expect({ opening: s.opening_units, moved: s.totals.movement_units, closing: s.closing_units }).toEqual({ opening: 15, moved: -1, closing: 14 });
  });

  it('as CSV the opening row, every line with naira and the closing row', async () => {
    const r = await statement(finance, month, 'text/csv');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/csv/);
    const rows = (await r.text()).trimEnd().split('\r\n');
    expect(rows[0]).toBe('date,kind,reference,description,units,balance_units,base_naira,vat_naira,fee_naira,total_naira');
    expect(rows[1]).toBe(`${month}-01,opening_balance,,Balance at the start of the month,,50,,,,`);
    // The month is still running: its last row is the balance so far, dated today (Lagos), not the month's end.
    const today = new Date(Date.now() + 3600_000).toISOString().slice(0, 10);
    expect(rows.at(-1)).toMatch(/^\d{4}-\d{2}-\d{2},closing_balance,,Balance so far \(month in progress\),,144,,,,$/);
    expect(rows.at(-1)!.slice(0, 10) <= today).toBe(true);
    const dec = (k: number) => (k / 100).toFixed(2);
    expect(rows.find((l) => l.includes(`,topup,${topup.reference},`))).toMatch(
      new RegExp(`,100,,${dec(topup.base_amount)},${dec(topup.vat_amount)},${dec(topup.service_charge)},${dec(topup.total_amount)}$`),
    );
    expect(rows.find((l) => l.includes(',refund,'))).toMatch(new RegExp(`,${refundRef},Payment refunded \\(never credited\\),0,,,,,-11015\\.23$`));
    expect(rows.find((l) => l.includes('cmd'))).toMatch(/,adjustment,,Adjustment: =cmd\|calc,2,,,,,$/);
    expect(rows.find((l) => l.includes(',verifications,'))).toContain('3 live verifications; 1 test-mode call (free),-3,');
  });

  it('as PDF it reads back with the balances, the top-up in naira and the identity', async () => {
    const r = await statement(finance, month, 'application/pdf');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/pdf');
    const file = join(work, 'statement.pdf');
    writeFileSync(file, Buffer.from(await r.arrayBuffer()));
    const text = (await run('pdftotext', ['-layout', file, '-'])).stdout;
    expect(text).toContain(`Statement for ${month}`);
    expect(text).toMatch(/Opening balance\s+50/);
    expect(text).toMatch(/Balance so far \(month in progress\)\s+144/);
    expect(text).toMatch(new RegExp(`Top-up of 100 units.*\\s+\\+100\\s+${naira(topup.total_amount)}`));
    expect(text).toContain(`base ${naira(topup.base_amount)}, VAT ${naira(topup.vat_amount)}, processor fee ${naira(topup.service_charge)}`);
    expect(text).toContain('Opening + movements = balance so far: 50 + 94 = 144');
  });

  it('a member is refused, a bad or future month is 400, an Accept it cannot serve is 406', async () => {
    const member = await statement(org.member.token, month, 'application/json');
    expect({ status: member.status, body: await member.json() }).toEqual({ status: 403, body: { detail: 'Only organisation administrators and finance officers may do this' } });
    expect((await statement(finance, '2026-13', 'application/json')).status).toBe(400);
    expect((await statement(finance, '0099-01', 'application/json')).status).toBe(400);
    expect((await statement(finance, `${Number(month.slice(0, 4)) + 1}-01`, 'application/json')).status).toBe(400);
    expect((await statement(finance, month, 'image/png')).status).toBe(406);
    // The month before: opens at 0, one adjustment, closes at 50.
    const last = new Date(since.getTime() - 86_400_000 + 3600_000).toISOString().slice(0, 7);
    const prev = (await (await statement(org.admin.token, last, 'application/json')).json()) as any;
    expect({ opening: prev.opening_units, moved: prev.totals.movement_units, closing: prev.closing_units }).toEqual({ opening: 0, moved: 50, closing: 50 });
    // An ended month closes on its last Lagos day; the running one is marked so.
    expect({ complete: prev.complete, as_of: prev.as_of }).toEqual({ complete: true, as_of: new Date(since.getTime() - 86_400_000 + 3600_000).toISOString().slice(0, 10) });
    const running = (await (await statement(org.admin.token, month, 'application/json')).json()) as any;
    expect(running.complete).toBe(false);
    expect(running.as_of.slice(0, 7)).toBe(month);
    const lastCsv = (await (await statement(org.admin.token, last, 'text/csv')).text()).trimEnd().split('\r\n').at(-1);
    expect(lastCsv).toBe(`${prev.as_of},closing_balance,,Balance at the end of the month,,50,,,,`);
  });
});
