import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/modules/organisations/index.ts';
import { addUnits, captureHeldUnit, debitFaceMatch, holdUnit } from '../../src/modules/wallet/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// A statement lists its lines in the order they happened, whatever order the ledger's ids give, says
// what a face match costs, and names its money fields in kobo. The lines are written as the wallet
// writes them (the chain by id), but dated out of id order: a correction committed first, dated last.

const run = promisify(execFile);

let stack: Stack;
let org: OrgFixture;
let token: string;
let work: string;

// Last Lagos month (complete), its 10th day from 00:00 Lagos: every line on one day.
const lagosNow = new Date(Date.now() + 3600_000);
const month = new Date(Date.UTC(lagosNow.getUTCFullYear(), lagosNow.getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
const day = `${month}-10`;
const t0 = Date.parse(`${day}T00:00:00+01:00`);
const at = (hours: number) => new Date(t0 + hours * 3600_000);
const topupRef = () => `TOP-${org.orgId}-${randomBytes(8).toString('hex')}`;
let bought: string;
let refunded: string;

beforeAll(async () => {
  stack = await startStack({ workers: false });
  org = await stack.createOrg({ units: 0 });
  const user = { username: `st-order-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
  await createUser(stack.db, { orgId: org.orgId, ...user, role: 'finance', requirePasswordChange: false });
  token = await stack.login(user.username, user.password);
  work = mkdtempSync(join(tmpdir(), 'statement-order-'));
  bought = topupRef();
  refunded = topupRef();
  const face = `REF-${randomBytes(6).toString('hex').toUpperCase()}`;
  const ts = (h: number) => sql.timestamp(at(h));
  await stack.db.query(sql.unsafe`
    INSERT INTO wallet_transactions (org_id, kind, amount, units_delta, units_before, units_after, details, reference, vat_amount, service_charge, created_at) VALUES
      (${org.orgId}, 'adjustment', 0, 100, 0, 100, '{"note": "opening float"}', NULL, NULL, NULL, ${ts(0)}),
      (${org.orgId}, 'adjustment', 0, -1, 100, 99, '{"note": "late correction"}', NULL, NULL, NULL, ${ts(5)}),
      (${org.orgId}, 'verification', 10000, -1, 99, 98, '{"mode": "nin", "reason": "corporate"}', ${`REF-${randomBytes(6).toString('hex').toUpperCase()}`}, NULL, NULL, ${ts(1)}),
      (${org.orgId}, 'fixture_verification', 0, 0, 98, 98, '{"mode": "nin", "fixture": true}', ${`REF-${randomBytes(6).toString('hex').toUpperCase()}`}, NULL, NULL, ${ts(1.01)}),
      (${org.orgId}, 'topup', 1000000, 100, 98, 198, '{"units": 100, "bonus_units": 0}', ${bought}, 75000, 26523, ${ts(2)}),
      (${org.orgId}, 'verification', 10000, -1, 198, 197, '{"mode": "face", "reason": "corporate"}', ${face}, NULL, NULL, ${ts(3)}),
      (${org.orgId}, 'face_match', 10000, -1, 197, 196, '{"mode": "face", "reason": "corporate", "face": true}', ${face}, NULL, NULL, ${ts(3.001)})`);
  // A payment refunded (never credited) in the middle of the day.
  await stack.db.query(sql.unsafe`
    INSERT INTO topups (reference, org_id, units, unit_cost_kobo, base_amount, vat_amount, service_charge, total_amount, status, paid_amount, refund_amount, refunded_at)
    VALUES (${refunded}, ${org.orgId}, 100, 10000, 1000000, 75000, 26523, 1101523, 'refunded', 1101523, 1101523, ${ts(4)})`);
});
afterAll(async () => {
  await stack?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const statement = (accept: string) => fetch(`${stack.url}/v1/statements/${month}`, { headers: { authorization: `Bearer ${token}`, accept } });

// What happened, in order: the float, a lookup with a test call, the top-up, a face match, the refund, the correction.
const KINDS_IN_ORDER = ['adjustment', 'verifications', 'topup', 'verifications', 'refund', 'adjustment'];

describe('a statement in time order', () => {
  it('When lines were committed in another order than they happened, then the JSON lists them by their instant, each with its at', async () => {
    const r = await statement('application/json');
    expect(r.status).toBe(200);
    const s = (await r.json()) as { lines: { kind: string; at: string; date: string; description: string }[]; opening_units: number; closing_units: number; totals: { movement_units: number } };
    expect(s.lines.map((l) => l.kind)).toEqual(KINDS_IN_ORDER);
    expect(s.lines.map((l) => l.at)).toEqual([0, 1, 2, 3, 4, 5].map((h) => at(h).toISOString()));
    expect(new Set(s.lines.map((l) => l.date))).toEqual(new Set([day]));
    expect(s.lines.map((l) => l.description)).toEqual([
      'Adjustment: opening float',
      '1 live verification; 1 test-mode call (free)',
      'Top-up of 100 units',
      '1 live verification, 1 with face match (2 units: lookup 1 + face 1)',
      'Payment refunded (never credited)',
      'Adjustment: late correction',
    ]);
    expect({ opening: s.opening_units, moved: s.totals.movement_units, closing: s.closing_units }).toEqual({ opening: 0, moved: 196, closing: 196 });
  });

  it('When the statement is a CSV or a PDF, then its lines come in the same order', async () => {
    const csv = (await (await statement('text/csv')).text()).trimEnd().split('\r\n');
    expect(csv.slice(2, -1).map((row) => row.split(',')[1])).toEqual(KINDS_IN_ORDER);

    const file = join(work, 'statement.pdf');
    writeFileSync(file, Buffer.from(await (await statement('application/pdf')).arrayBuffer()));
    const text = (await run('pdftotext', ['-layout', file, '-'])).stdout;
    const positions = ['opening float', 'test-mode call', 'Top-up of 100 units', 'with face match', 'Payment refunded', 'late correction'].map((words) => text.indexOf(words));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  it('When a run has a face match, then its line says how many and why each costs more: the lookup and the face comparison', async () => {
    const s = (await (await statement('application/json')).json()) as { lines: Record<string, unknown>[] };
    expect(s.lines.filter((l) => l.kind === 'verifications').map((l) => ({ count: l.count, units: l.units, face_match_count: l.face_match_count, face_units: l.face_units }))).toEqual([
      { count: 1, units: -1, face_match_count: 0, face_units: 0 },
      { count: 1, units: -2, face_match_count: 1, face_units: -1 },
    ]);
  });

  it('When the statement is a PDF, then a face match\'s cost is printed whole, not cut off in its column', async () => {
    const file = join(work, 'statement-face.pdf');
    writeFileSync(file, Buffer.from(await (await statement('application/pdf')).arrayBuffer()));
    const text = (await run('pdftotext', ['-layout', file, '-'])).stdout;
    expect(text).toContain('1 with face match (2 units: lookup 1 + face 1)');
    expect(text).not.toContain('\u2026');
  });

  it('When money is in the JSON, then each amount has a *_kobo field beside the earlier name, with the same value', async () => {
    const s = (await (await statement('application/json')).json()) as { lines: Record<string, unknown>[]; totals: Record<string, unknown> };
    expect(s.lines.find((l) => l.kind === 'topup')).toMatchObject({
      reference: bought,
      base_kobo: 1000000, vat_kobo: 75000, fee_kobo: 26523, total_kobo: 1101523,
      base: 1000000, vat: 75000, fee: 26523, total: 1101523,
    });
    expect(s.lines.find((l) => l.kind === 'refund')).toMatchObject({ reference: refunded, amount_kobo: 1101523, amount: 1101523 });
    expect(s.totals).toMatchObject({ topup_total_kobo: 1101523, refund_total_kobo: 1101523, topup_total: 1101523, refund_total: 1101523 });

    // The document marks the earlier names deprecated.
    const doc = (await (await fetch(`${stack.url}/v1/openapi.json`)).json()) as any;
    const line = doc.components.schemas.StatementLine.oneOf.find((o: any) => (o.properties.kind.const ?? o.properties.kind.enum?.[0]) === 'topup');
    expect(line.properties.base.deprecated).toBe(true);
    expect(line.properties.base_kobo.deprecated).toBeUndefined();
    expect(doc.components.schemas.Statement.properties.totals.properties.refund_total.deprecated).toBe(true);
  });
});

describe('a face match and its lookup on a statement', () => {
  it('When a top-up is written between a lookup\'s debit and its face match\'s, then the statement shows them in one line, before the top-up', async () => {
    const payer = await stack.createOrg({ units: 5 });
    const reference = `REF-${randomBytes(6).toString('hex').toUpperCase()}`;
    const details = sql.fragment`'{"mode": "face", "reason": "corporate"}'::jsonb`;
    // The wallet module's own writes, in the order a settlement can make them: the lookup's unit
    // held and captured, a top-up credited, then the face comparison's units.
    expect(await holdUnit(stack.db, payer.orgId, sql.fragment`SELECT org_id FROM hold`)).toBe(true);
    expect(await captureHeldUnit(stack.db, { reference, decide: sql.fragment`SELECT ${payer.orgId}::bigint AS org_id, ${details} AS details` })).not.toBeNull();
    const topup = `TOP-${payer.orgId}-${randomBytes(8).toString('hex')}`;
    expect(await addUnits(stack.db, { orgId: payer.orgId, units: 100, kind: 'topup', amountKobo: 1000000, vatAmount: 75000, serviceCharge: 26523, reference: topup, details: { units: 100, bonus_units: 0 } })).not.toBeNull();
    expect(await debitFaceMatch(stack.db, { orgId: payer.orgId, units: 1, reference, eligible: sql.fragment`SELECT 1`, decide: sql.fragment`SELECT ${details} AS details FROM paid` })).toBe(true);

    const thisMonth = new Date(Date.now() + 3600_000).toISOString().slice(0, 7);
    const r = await fetch(`${stack.url}/v1/statements/${thisMonth}`, { headers: { authorization: `Bearer ${payer.admin.token}` } });
    expect(r.status).toBe(200);
    const s = (await r.json()) as { lines: Record<string, unknown>[] };
    // The organisation's opening units came as an adjustment, before any of it.
    const moved = s.lines.filter((l) => l.kind !== 'adjustment');
    expect(moved.map((l) => l.kind)).toEqual(['verifications', 'topup']);
    expect(moved[0]).toMatchObject({ count: 1, units: -2, face_match_count: 1, face_units: -1, description: '1 live verification, 1 with face match (2 units: lookup 1 + face 1)' });
    expect(moved[1]).toMatchObject({ reference: topup, units: 100 });
  });
});
