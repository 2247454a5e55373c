import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

// Test queries read loosely typed rows; the service's own queries are the typed ones.
const q = sql.type(z.record(z.string(), z.any()));
const run = promisify(execFile);

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ captureLogs: true });
});
afterAll(async () => stack?.close());

async function admin(...args: string[]): Promise<{ code: number; json: any }> {
  const env = {
    ...process.env,
    DATABASE_URL: stack.config.DATABASE_URL,
    PAYSTACK_BASE_URL: stack.paymentSim.url,
    PAYSTACK_SECRET_KEY: stack.config.PAYSTACK_SECRET_KEY,
    LOG_LEVEL: 'silent',
  };
  try {
    const r = await run(process.execPath, ['src/cli/admin.ts', ...args], { env });
    return { code: 0, json: JSON.parse(r.stdout.trim().split('\n').at(-1)!) };
  } catch (err) {
    const e = err as { code: number; stderr: string };
    const line = e.stderr.trim().split('\n')[0] ?? '';
    return { code: e.code, json: line.startsWith('{') ? JSON.parse(line) : null };
  }
}

async function sim(path: string, body: Record<string, unknown> = {}): Promise<any> {
  const r = await fetch(`${stack.paymentSim.url}/__sim${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(r.status).toBe(200);
  return ((await r.json()) as any).data;
}
const refundsAtProcessor = async (reference: string): Promise<any[]> =>
  (((await (await fetch(`${stack.paymentSim.url}/__sim/refunds`)).json()) as any).data as any[]).filter((r) => r.reference === reference);

async function initialize(token: string, units = 100) {
  const r = await stack.api('POST', '/v1/topup/initialize', { token, form: { units } });
  expect(r.status).toBe(200);
  return r.body as { reference: string; total_amount: number; base_amount: number };
}

const topup = (reference: string) =>
  stack.db.one(q`SELECT status, paid_amount::int, refund_id, refund_status, refund_amount::int, refund_error, resolved_by, resolution_note,
                        resolved_at IS NOT NULL AS resolved FROM topups WHERE reference = ${reference}`);
const statusBecomes = (reference: string, status: string) =>
  waitFor(async () => (await topup(reference)).status === status, { what: `top-up ${reference} ${status}` });
const wallet = (orgId: number) => stack.db.one(q`SELECT units::int, reserved::int FROM wallets WHERE org_id = ${orgId}`);
const ledgerLines = (reference: string) => stack.db.oneFirst(q`SELECT count(*)::int FROM wallet_transactions WHERE reference = ${reference}`);
const topupsMetric = async (state: string) =>
  (await stack.workers!.deps.metrics.registry.getSingleMetric('topups_total')!.get()).values.find((v) => v.labels.state === state)?.value ?? 0;

/** A retired organisation whose payment link, closed at retirement, is paid afterwards. */
async function paidAfterRetirement() {
  const org = await stack.createOrg();
  const t = await initialize(org.admin.token, 200);
  await admin('org:delete', '--org', String(org.orgId), '--close-pending');
  await sim(`/transactions/${t.reference}/pay`);
  await statusBecomes(t.reference, 'refund_due');
  return { org, t };
}

describe('retired organisations', () => {
  it('When top-ups are pending, then org:delete refuses; with --close-pending it closes them and retires the organisation', async () => {
    const org = await stack.createOrg();
    const t = await initialize(org.admin.token);
    const refused = await admin('org:delete', '--org', String(org.orgId));
    expect(refused).toEqual({
      code: 1,
      json: { detail: `organisation ${org.orgId} has 1 pending top-up(s): retry with --close-pending to close them, or wait until they are paid or given up` },
    });
    expect((await admin('org:delete', '--org', String(org.orgId), '--close-pending')).json).toEqual({ id: org.orgId, deleted: true, closed_topups: 1 });
    expect((await topup(t.reference)).status).toBe('abandoned');
  });

  it('When a link is paid after org:delete, then the top-up is refund_due, logged and counted, and the wallet is untouched', async () => {
    const before = await topupsMetric('refund_due');
    const { org, t } = await paidAfterRetirement();
    expect(await topup(t.reference)).toMatchObject({ status: 'refund_due', paid_amount: t.total_amount });
    expect(await wallet(org.orgId)).toEqual({ units: 0, reserved: 0 });
    expect(await ledgerLines(t.reference)).toBe(0);
    expect(await stack.db.oneFirst(q`SELECT lifetime_units::int FROM organisations WHERE id = ${org.orgId}`)).toBe(0);
    expect(await topupsMetric('refund_due')).toBe(before + 1);
    const logged = stack.logs
      .flatMap((chunk) => chunk.split('\n').filter(Boolean))
      .map((l) => JSON.parse(l))
      .filter((l) => l.reference === t.reference && /RETIRED ORGANISATION/.test(l.msg));
    expect(logged).toHaveLength(1);
    expect(logged[0].level).toBe(50);
    expect(Object.keys(logged[0]).filter((k) => !['level', 'time', 'pid', 'msg', 'job', 'jobId', 'attempt', 'reqId'].includes(k)).sort()).toEqual(['orgId', 'reference']);
  });

  it('When topup:refund runs twice and more, then the processor holds one refund and the top-up ends refunded', async () => {
    const { org, t } = await paidAfterRetirement();
    const first = await admin('topup:refund', '--reference', t.reference);
    expect(first.code).toBe(0);
    expect(first.json).toMatchObject({ reference: t.reference, status: 'refunding', refund_status: 'pending', refund_amount: t.total_amount, refund_error: null });
    const again = await admin('topup:refund', '--reference', t.reference);
    expect(again.json).toEqual(first.json);
    expect(await refundsAtProcessor(t.reference)).toHaveLength(1);

    await sim(`/refunds/${first.json.refund_id}/processed`);
    const done = await admin('topup:refund', '--reference', t.reference);
    expect(done.json).toMatchObject({ status: 'refunded', refund_id: first.json.refund_id, refund_status: 'processed' });
    expect((await admin('topup:refund', '--reference', t.reference)).json).toEqual(done.json);
    expect(await refundsAtProcessor(t.reference)).toHaveLength(1);
    expect(await ledgerLines(t.reference)).toBe(0);
    // One audit event for the money that went back, however often the command ran.
    const events = await stack.db.any(q`SELECT org_id::int, actor, details FROM audit_events WHERE action = 'topup.refunded' AND target = ${t.reference}`);
    expect(events).toEqual([{ org_id: org.orgId, actor: 'system', details: { refund_id: first.json.refund_id, amount: t.total_amount } }]);
  });

  it('When a command crashed after claiming (before or after calling the processor), then the retry ends with exactly one refund', async () => {
    await sim('/refunds/initial-status', { status: 'processed' });
    try {
      const before = await paidAfterRetirement();
      await stack.db.query(q`UPDATE topups SET status = 'refunding', refund_claimed_at = now() WHERE reference = ${before.t.reference}`);
      expect((await admin('topup:refund', '--reference', before.t.reference)).json).toMatchObject({ status: 'refunded', refund_status: 'processed' });
      expect(await refundsAtProcessor(before.t.reference)).toHaveLength(1);

      // The crashed command's request reached the processor, but its answer was never recorded.
      const after = await paidAfterRetirement();
      await stack.db.query(q`UPDATE topups SET status = 'refunding', refund_claimed_at = now() WHERE reference = ${after.t.reference}`);
      const sent = await fetch(`${stack.paymentSim.url}/refund`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.config.PAYSTACK_SECRET_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ transaction: after.t.reference }),
      });
      expect(sent.status).toBe(200);
      const retried = await admin('topup:refund', '--reference', after.t.reference);
      expect(retried.json).toMatchObject({ status: 'refunded', refund_id: String(((await sent.json()) as any).data.id) });
      expect(await refundsAtProcessor(after.t.reference)).toHaveLength(1);
    } finally {
      await sim('/refunds/initial-status', { status: 'pending' });
    }
  });

  it('When the processor fails the refund, then the top-up is refund_due again with the error, and a new run refunds it', async () => {
    const { t } = await paidAfterRetirement();
    const first = await admin('topup:refund', '--reference', t.reference);
    await sim(`/refunds/${first.json.refund_id}/failed`);
    const failed = await admin('topup:refund', '--reference', t.reference);
    expect(failed.json).toMatchObject({ status: 'refund_due', refund_status: 'failed', refund_error: 'the processor reports the refund failed' });
    const retried = await admin('topup:refund', '--reference', t.reference);
    expect(retried.json).toMatchObject({ status: 'refunding', refund_status: 'pending' });
    expect(retried.json.refund_id).not.toBe(first.json.refund_id);
    expect((await refundsAtProcessor(t.reference)).map((r) => r.status)).toEqual(['failed', 'pending']);
  });

  it('When a top-up is not refund_due, then topup:refund refuses with exit 1; an unknown reference too', async () => {
    const org = await stack.createOrg();
    const t = await initialize(org.admin.token);
    expect(await admin('topup:refund', '--reference', t.reference)).toEqual({ code: 1, json: { detail: `top-up ${t.reference} is pending: only a refund_due top-up is refunded` } });
    expect(await admin('topup:refund', '--reference', 'TOP-1-0000000000000000')).toEqual({ code: 1, json: { detail: 'top-up TOP-1-0000000000000000 not found' } });
    expect((await admin('topup:refund')).code).toBe(2);
  });
});

describe('amount mismatches', () => {
  async function mismatched(units = 100) {
    const org = await stack.createOrg({ units: 5 });
    const t = await initialize(org.admin.token, units);
    await sim(`/transactions/${t.reference}/tamper`, { amount: t.total_amount - 500 });
    await sim(`/transactions/${t.reference}/pay`);
    await statusBecomes(t.reference, 'amount_mismatch');
    return { org, t };
  }

  it('When resolved with --credit, then the units initialised are credited and who resolved it and why is recorded', async () => {
    const { org, t } = await mismatched(300);
    expect((await admin('topup:resolve', '--reference', t.reference, '--credit')).code).toBe(2);
    expect((await admin('topup:resolve', '--reference', t.reference, '--credit', '--refund', '--note', 'x')).code).toBe(2);
    const r = await admin('topup:resolve', '--reference', t.reference, '--credit', '--note', 'bank fee taken from the payment', '--by', 'ops-ada');
    expect(r).toEqual({
      code: 0,
      json: { reference: t.reference, status: 'credited', units_added: 300, new_balance: 305, resolved_by: 'ops-ada', resolution_note: 'bank fee taken from the payment' },
    });
    expect(await topup(t.reference)).toMatchObject({ status: 'credited', paid_amount: t.total_amount - 500, resolved: true, resolved_by: 'ops-ada' });
    const line = await stack.db.one(q`SELECT kind, units_delta::int, details FROM wallet_transactions WHERE reference = ${t.reference}`);
    expect(line).toMatchObject({ kind: 'topup', units_delta: 300, details: { source: 'resolve', resolved_by: 'ops-ada' } });
    expect(await admin('topup:resolve', '--reference', t.reference, '--credit', '--note', 'again')).toEqual({
      code: 1,
      json: { detail: `top-up ${t.reference} is credited, not amount_mismatch` },
    });
  });

  it('When a credited top-up was not paid its total and not resolved, then the schema refuses it', async () => {
    const { t } = await mismatched();
    await expect(stack.db.query(q`UPDATE topups SET status = 'credited', credited_at = now() WHERE reference = ${t.reference}`)).rejects.toMatchObject({
      constraint: 'topups_credited_paid_total',
    });
  });

  it('When resolved with --refund, then the amount paid is refunded through the processor and the operator recorded', async () => {
    const { org, t } = await mismatched();
    const r = await admin('topup:resolve', '--reference', t.reference, '--refund', '--note', 'payer asked for the money back', '--by', 'ops-ben');
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ reference: t.reference, status: 'refunding', refund_amount: t.total_amount - 500 });
    expect(await topup(t.reference)).toMatchObject({ resolved_by: 'ops-ben', resolution_note: 'payer asked for the money back' });
    expect(await refundsAtProcessor(t.reference)).toHaveLength(1);
    expect(await wallet(org.orgId)).toEqual({ units: 5, reserved: 0 });
  });
});

describe('payments reversed after crediting', () => {
  it('When the processor reports a credited payment reversed, then the top-up is charged_back, logged and counted, the wallet is not debited', async () => {
    const org = await stack.createOrg();
    const t = await initialize(org.admin.token, 200);
    await sim(`/transactions/${t.reference}/pay`);
    await statusBecomes(t.reference, 'credited');
    const before = await topupsMetric('charged_back');
    await sim(`/transactions/${t.reference}/reverse`);
    await statusBecomes(t.reference, 'charged_back');
    expect(await wallet(org.orgId)).toEqual({ units: 200, reserved: 0 });
    expect(await ledgerLines(t.reference)).toBe(1);
    expect(await topupsMetric('charged_back')).toBe(before + 1);
    const logged = stack.logs
      .flatMap((chunk) => chunk.split('\n').filter(Boolean))
      .map((l) => JSON.parse(l))
      .find((l) => l.reference === t.reference && /CHARGED BACK/.test(l.msg));
    expect(logged).toMatchObject({ level: 50, orgId: org.orgId });
    const v = await stack.api('POST', '/v1/topup/verify', { token: org.admin.token, form: { reference: t.reference } });
    expect(v.status).toBe(409);
    expect(v.body.detail).toBe('This payment was reversed by the payment processor after it was credited');
  });
});
