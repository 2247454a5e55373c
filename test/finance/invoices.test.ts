import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.ts';
import { createUser } from '../../src/modules/organisations/index.ts';
import { creditTopup } from '../../src/modules/topup/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

const q = sql.type(z.record(z.string(), z.any()));
const run = promisify(execFile);
const log = createLogger({ level: 'silent' });

const SELLER = { INVOICE_SELLER_NAME: 'Verifiers Limited', INVOICE_SELLER_ADDRESS: '12 Marina Road, Lagos Island, Lagos', INVOICE_SELLER_TIN: '87654321-0001' };

let stack: Stack;
let org: OrgFixture;
let finance: string;
let work: string;

beforeAll(async () => {
  stack = await startStack({ env: { ...SELLER, RATE_LIMIT_PER_TOKEN: '10000', RATE_LIMIT_PER_ORG: '10000' } });
  org = await stack.createOrg({ units: 5 });
  const user = { username: `i34-inv-fin-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
  await createUser(stack.db, { orgId: org.orgId, ...user, role: 'finance', requirePasswordChange: false });
  finance = await stack.login(user.username, user.password);
  work = mkdtempSync(join(tmpdir(), 'i34-invoice-'));
});
afterAll(async () => {
  await stack?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

async function initialize(token: string, units: number) {
  const r = await stack.api('POST', '/v1/topup/initialize', { token, form: { units } });
  expect(r.status).toBe(200);
  return r.body as { reference: string; base_amount: number; vat_amount: number; service_charge: number; total_amount: number; unit_cost: number };
}

async function pay(reference: string) {
  const r = await fetch(`${stack.paymentSim.url}/__sim/transactions/${reference}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ webhook: 'none' }),
  });
  expect(r.status).toBe(200);
}

async function pdfText(pdf: Buffer, name: string): Promise<string> {
  const file = join(work, `${name}.pdf`);
  writeFileSync(file, pdf);
  return (await run('pdftotext', ['-layout', file, '-'])).stdout;
}

const invoiceOf = (token: string, reference: string) => fetch(`${stack.url}/v1/topups/${reference}/invoice`, { headers: { authorization: `Bearer ${token}` } });

const naira = (kobo: number) => `NGN ${Math.floor(kobo / 100).toLocaleString('en-US')}.${String(kobo % 100).padStart(2, '0')}`;

describe('invoices', () => {
  it('the organisation settings carry address and TIN; administrators set them, every member reads them, bad values are refused', async () => {
    const set = await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: { address: '4 Adeola Odeku Street, Victoria Island, Lagos', tin: '12345678-0001' } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ address: '4 Adeola Odeku Street, Victoria Island, Lagos', tin: '12345678-0001' });
    expect((await stack.api('GET', '/v1/me/organisation', { token: org.member.token })).body).toMatchObject({ tin: '12345678-0001' });
    // The trail names the settings changed, not the address or TIN (a sole trader's address is personal data).
    const details = await stack.db.anyFirst(q`SELECT details FROM audit_events WHERE org_id = ${org.orgId} AND action = 'organisation.settings_changed' ORDER BY id DESC LIMIT 1`);
    expect(details).toEqual([{ changed: ['address', 'tin'] }]);
    const bad = await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: { tin: 'ABC' } });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/tin must be 8 to 20 digits/);
    expect((await stack.api('PATCH', '/v1/me/organisation', { token: finance, json: { tin: '11111111-0001' } })).status).toBe(403);
  });

  it('a credited top-up has a PDF invoice that reads back with seller, buyer, number, payment date, units, unit price, base, VAT 7.5 %, fee, total and reference in naira', async () => {
    // The buyer's address and TIN, as the settings test sets them (tests run in any order).
    const set = await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: { address: '4 Adeola Odeku Street, Victoria Island, Lagos', tin: '12345678-0001' } });
    expect(set.status).toBe(200);
    const t = await initialize(finance, 300);
    // Not credited yet: no invoice.
    const early = await invoiceOf(finance, t.reference);
    expect(early.status).toBe(404);
    expect(((await early.json()) as { detail: string }).detail).toBe('This top-up has no invoice: it is pending, not credited');
    await pay(t.reference);
    const verified = await stack.api('POST', '/v1/topup/verify', { token: finance, form: { reference: t.reference } });
    expect(verified.status).toBe(200);

    const row = await stack.db.one(q`SELECT number, issued_at FROM invoices WHERE topup_reference = ${t.reference}`);
    expect(row.number).toMatch(/^INV-\d{4}-\d{6}$/);
    expect((await stack.api('GET', `/v1/topups/${t.reference}`, { token: finance })).body.invoice_number).toBe(row.number);
    const r = await invoiceOf(finance, t.reference);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/pdf');
    expect(r.headers.get('content-disposition')).toBe(`attachment; filename="${row.number}.pdf"`);
    const text = await pdfText(Buffer.from(await r.arrayBuffer()), 'one');
    const orgName = await stack.db.oneFirst(q`SELECT name FROM organisations WHERE id = ${org.orgId}`);
    const paidOn = new Intl.DateTimeFormat('en-GB', { timeZone: 'Africa/Lagos', day: '2-digit', month: 'long', year: 'numeric' }).format(new Date(row.issued_at));
    const expected = [
      'VAT invoice',
      `Invoice number: ${row.number}`,
      `Date of issue: ${paidOn}`,
      `Date of payment: ${paidOn}`,
      `Payment reference: ${t.reference}`,
      'Verifiers Limited',
      '12 Marina Road, Lagos Island,',
      'TIN: 87654321-0001',
      orgName,
      '4 Adeola Odeku Street, Victoria Island,',
      'TIN: 12345678-0001',
      'Identity verification units',
      '300',
      naira(t.unit_cost),
      `Base amount`,
      naira(t.base_amount),
      `VAT 7.5 %`,
      naira(t.vat_amount),
      'Processor fee',
      naira(t.service_charge),
      'Total paid',
      naira(t.total_amount),
    ];
    for (const piece of expected) expect(text, piece).toContain(piece);
    // Each amount on its own row, beside its label.
    expect(text).toMatch(new RegExp(`Identity verification units\\s+300\\s+${naira(t.unit_cost)}\\s+${naira(t.base_amount)}`));
    expect(text).toMatch(new RegExp(`VAT 7\\.5 %\\s+${naira(t.vat_amount)}`));
    expect(text).toMatch(new RegExp(`Processor fee\\s+${naira(t.service_charge)}`));
    expect(text).toMatch(new RegExp(`Total paid\\s+${naira(t.total_amount)}`));
    // The amounts are the top-up's: 300 units at NGN 100.00, VAT on the base only.
    expect(naira(t.base_amount)).toBe('NGN 30,000.00');
    expect(naira(t.vat_amount)).toBe('NGN 2,250.00');
    expect(t.total_amount).toBe(t.base_amount + t.vat_amount + t.service_charge);

    // The administrator reads it too; a member, another organisation and a bad reference are refused.
    expect((await invoiceOf(org.admin.token, t.reference)).status).toBe(200);
    const member = await invoiceOf(org.member.token, t.reference);
    expect({ status: member.status, body: await member.json() }).toEqual({ status: 403, body: { detail: 'Only organisation administrators and finance officers may do this' } });
    const other = await stack.createOrg();
    expect((await invoiceOf(other.admin.token, t.reference)).status).toBe(403);
    expect((await invoiceOf(finance, 'TOP-1-nothex')).status).toBe(400);
  });

  it('a buyer address of the longest allowed length wraps in its column and pushes the amounts down, overprinting nothing', async () => {
    const own = await stack.createOrg();
    const address = `Plot ${'1234 Long Industrial Avenue, '.repeat(10)}Ikeja`.slice(0, 299);
    const set = await stack.api('PATCH', '/v1/me/organisation', { token: own.admin.token, json: { address, tin: '12345678-0001' } });
    expect(set.status, set.text).toBe(200);
    const t = await initialize(own.admin.token, 100);
    await pay(t.reference);
    expect((await stack.api('POST', '/v1/topup/verify', { token: own.admin.token, form: { reference: t.reference } })).status).toBe(200);
    const text = await pdfText(Buffer.from(await (await invoiceOf(own.admin.token, t.reference)).arrayBuffer()), 'long-address');
    const lines = text.split('\n');
    const header = lines.findIndex((l) => /\bDescription\b/.test(l));
    const tin = lines.findIndex((l) => l.includes('TIN: 12345678-0001'));
    expect(header, text).toBeGreaterThan(-1);
    expect(tin, text).toBeGreaterThan(-1);
    // The buyer's block (its TIN last) ends above the table's header, which reads as itself alone.
    expect(tin, text).toBeLessThan(header);
    expect(lines[header]!.trim().split(/\s{2,}/)).toEqual(['Description', 'Units', 'Unit price', 'Amount']);
  });

  it("the invoice is dated by the payment, as the processor reports it, not by the credit that came days later", async () => {
    const late = await startStack({ manualClock: new Date(), env: SELLER });
    try {
      const own = await late.createOrg();
      const r = await late.api('POST', '/v1/topup/initialize', { token: own.admin.token, form: { units: 100 } });
      expect(r.status).toBe(200);
      const before = Date.now();
      const paid = await fetch(`${late.paymentSim.url}/__sim/transactions/${r.body.reference}/pay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ webhook: 'none' }) });
      expect(paid.status).toBe(200);
      const after = Date.now();
      // No webhook came; the payer's verify arrives three days later.
      late.clock.advance!(3 * 24 * 3600_000);
      const token = await late.login(own.admin.username, own.admin.password);
      expect((await late.api('POST', '/v1/topup/verify', { token, form: { reference: r.body.reference } })).status).toBe(200);
      const row = await late.db.one(q`SELECT paid_at, credited_at FROM topups WHERE reference = ${r.body.reference}`);
      expect(row.paid_at).toBeGreaterThanOrEqual(before - 1000);
      expect(row.paid_at).toBeLessThanOrEqual(after + 1000);
      expect(row.credited_at - row.paid_at).toBeGreaterThanOrEqual(3 * 24 * 3600_000 - 60_000);
      const lagos = new Intl.DateTimeFormat('en-GB', { timeZone: 'Africa/Lagos', day: '2-digit', month: 'long', year: 'numeric' });
      const pdf = await fetch(`${late.url}/v1/topups/${r.body.reference}/invoice`, { headers: { authorization: `Bearer ${token}` } });
      expect(pdf.status).toBe(200);
      const text = await pdfText(Buffer.from(await pdf.arrayBuffer()), 'late-credit');
      expect(text).toContain(`Date of payment: ${lagos.format(new Date(row.paid_at))}`);
      expect(text).not.toContain(`Date of payment: ${lagos.format(new Date(row.credited_at))}`);
    } finally {
      await late.close();
    }
  });

  it('20 concurrent credits get 20 distinct invoice numbers, and the service-wide numbering has no gap', async () => {
    const orgs = await Promise.all([0, 1, 2, 3].map(() => stack.createOrg()));
    const refs: string[] = [];
    for (let i = 0; i < 20; i++) refs.push((await initialize(orgs[i % orgs.length]!.admin.token, 100)).reference);
    await Promise.all(refs.map(pay));
    const deps = stack.workers!.deps;
    const outcomes = await Promise.all(refs.map((ref) => creditTopup(deps, ref, 'webhook', log)));
    expect(outcomes.map((o) => o.outcome)).toEqual(refs.map(() => 'credited'));

    const mine = await stack.db.anyFirst(q`SELECT number FROM invoices WHERE topup_reference = ANY(${sql.array(refs, 'text')})`);
    expect(new Set(mine).size).toBe(20);
    // Every invoice of the service, per year: 1..N with nothing missing, and the counter at N.
    const years = await stack.db.any(q`SELECT year, count(*)::int AS n, min(seq) AS lo, max(seq) AS hi FROM invoices GROUP BY year`);
    for (const y of years) {
      expect({ year: y.year, lo: y.lo, hi: y.hi }).toEqual({ year: y.year, lo: 1, hi: y.n });
      expect(await stack.db.oneFirst(q`SELECT last_number FROM invoice_counters WHERE year = ${y.year}`)).toBe(y.n);
    }
    expect(years.reduce((n, y) => n + y.n, 0)).toBe(await stack.db.oneFirst(q`SELECT count(*)::int FROM topups WHERE credited_at IS NOT NULL`));
    // Each invoice is the audit event's too.
    const audited = await stack.db.anyFirst(q`SELECT details->>'invoice' FROM audit_events WHERE action = 'topup.credited' AND target = ANY(${sql.array(refs, 'text')})`);
    expect(new Set(audited)).toEqual(new Set(mine));
  });

  it('the migration numbers the top-ups credited before invoices existed in the order they were credited, and sets the counters after them', async () => {
    const migration = readFileSync(new URL('../../migrations/1732200310000_invoices.sql', import.meta.url), 'utf8');
    const backfill = migration.slice(migration.indexOf('-- Top-ups credited before'), migration.indexOf('-- Down Migration'));
    // Enough credited top-ups of its own, whatever ran before it in this file (tests run shuffled).
    const own = await stack.createOrg();
    const ownRefs: string[] = [];
    for (let i = 0; i < 6; i++) ownRefs.push((await initialize(own.admin.token, 100)).reference);
    await Promise.all(ownRefs.map(pay));
    for (const ref of ownRefs) expect((await creditTopup(stack.workers!.deps, ref, 'webhook', log)).outcome).toMatch(/^(credited|already_credited)$/);
    const credited = await stack.db.anyFirst(q`SELECT reference FROM topups WHERE credited_at IS NOT NULL ORDER BY credited_at, reference`);
    expect(credited.length).toBeGreaterThanOrEqual(6);
    // As if none had been issued: the rows the migration would find.
    await stack.db.transaction(async (tx) => {
      await tx.query(sql.unsafe`DELETE FROM invoices`);
      await tx.query(sql.unsafe`DELETE FROM invoice_counters`);
      // The migration's own statements, each as a template with no values.
      for (const statement of backfill.split(/;\s*\n/).filter((x) => /\bINSERT\b/.test(x))) {
        await tx.query(sql.unsafe(Object.freeze(Object.assign([statement], { raw: Object.freeze([statement]) })) as unknown as TemplateStringsArray));
      }
    });
    const numbered = await stack.db.any(q`SELECT topup_reference, seq FROM invoices ORDER BY seq`);
    expect(numbered.map((r) => r.topup_reference)).toEqual(credited);
    expect(numbered.map((r) => r.seq)).toEqual(credited.map((_, i) => i + 1));
    expect(await stack.db.oneFirst(q`SELECT last_number FROM invoice_counters`)).toBe(credited.length);
    // The next credit continues the numbering.
    const t = await initialize(org.admin.token, 100);
    await pay(t.reference);
    expect((await creditTopup(stack.workers!.deps, t.reference, 'webhook', log)).outcome).toBe('credited');
    expect(await stack.db.oneFirst(q`SELECT seq FROM invoices WHERE topup_reference = ${t.reference}`)).toBe(credited.length + 1);
  });
});
