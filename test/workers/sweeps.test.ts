import type { Job } from 'bullmq';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.ts';
import { mailProcessors } from '../../workers/processors/mail.ts';
import { topupProcessors } from '../../workers/processors/topup.ts';
import { walletProcessors } from '../../workers/processors/wallet.ts';
import { startStack, type Stack } from '../setup/harness.ts';

// Test queries read loosely typed rows; the service's own queries are the typed ones.
const q = sql.type(z.record(z.string(), z.any()));

// Real queues and workers, a manual clock shared by API and workers; the scheduled jobs are run by
// calling their processors, as the scheduler would.
const START = new Date('2026-03-02T10:00:00+01:00');
const MIN_AGE_MS = 120_000;
const HOUR = 3_600_000;

let stack: Stack;
const lines: string[] = [];
const log = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(l) } });
const job = {} as Job;

beforeAll(async () => {
  stack = await startStack({ manualClock: START, webhookMode: 'none' });
});
afterAll(async () => stack?.close());

const sweep = () => topupProcessors['topup.sweep']!({}, job, stack.workers!.deps, log);
const audit = () => walletProcessors['ledger.audit']!({}, job, stack.workers!.deps, log);
const statusOf = (reference: string) => stack.db.oneFirst(q`SELECT status FROM topups WHERE reference = ${reference}`);
const unitsOf = (orgId: number) => stack.db.oneFirst(q`SELECT units::int FROM wallets WHERE org_id = ${orgId}`);

async function initialize(token: string, units = 100) {
  const r = await stack.api('POST', '/v1/topup/initialize', { token, form: { units } });
  expect(r.status).toBe(200);
  return r.body as { reference: string };
}

async function simulator(reference: string, action: 'pay' | 'fail') {
  const r = await fetch(`${stack.paymentSim.url}/__sim/transactions/${reference}/${action}`, { method: 'POST' });
  expect(r.status).toBe(200);
}

describe('topup.sweep', () => {
  it('When a paid top-up never got its webhook, then the sweep credits it once it is past the minimum age', async () => {
    stack.clock.set!(START);
    const org = await stack.createOrg({ units: 5 });
    const t = await initialize(org.admin.token, 200);
    await simulator(t.reference, 'pay');

    // Inside the minimum age the sweep leaves it to the webhook and verify paths.
    expect(await sweep()).toEqual({ checked: 0, credited: 0, closed: 0 });
    expect(await unitsOf(org.orgId)).toBe(5);

    stack.clock.advance!(MIN_AGE_MS + 1000);
    expect(await sweep()).toMatchObject({ credited: 1 });
    expect(await unitsOf(org.orgId)).toBe(205);
    expect(await statusOf(t.reference)).toBe('credited');
    const line = await stack.db.one(q`SELECT details FROM wallet_transactions WHERE reference = ${t.reference}`);
    expect(line.details.source).toBe('sweep');

    // A credited top-up leaves the sweep's set; running again changes nothing.
    const again = await sweep();
    expect(again.credited).toBe(0);
    expect(await unitsOf(org.orgId)).toBe(205);
  });

  it('When the payment failed, then the sweep closes it; an unpaid checkout stays open until the maximum age', async () => {
    stack.clock.set!(START);
    const org = await stack.createOrg();
    const failed = await initialize(org.admin.token);
    const unpaid = await initialize(org.admin.token);
    await simulator(failed.reference, 'fail');

    stack.clock.advance!(MIN_AGE_MS + 1000);
    const r = await sweep();
    expect(r.closed).toBeGreaterThanOrEqual(1);
    expect(await statusOf(failed.reference)).toBe('failed');
    expect(await statusOf(unpaid.reference)).toBe('pending');
    expect(await stack.db.oneFirst(q`SELECT processor_status FROM topups WHERE reference = ${unpaid.reference}`)).toBe('abandoned');

    stack.clock.advance!(stack.config.TOPUP_SWEEP_MAX_AGE_HOURS * HOUR);
    await sweep();
    expect(await statusOf(unpaid.reference)).toBe('abandoned');

    // Given up is not closed to payment: a payer who pays after all is still credited (verify here).
    await simulator(unpaid.reference, 'pay');
    const token = await stack.login(org.admin.username, org.admin.password);
    const v = await stack.api('POST', '/v1/topup/verify', { token, form: { reference: unpaid.reference } });
    expect(v.status).toBe(200);
    expect(v.body.message).toBe('Top-up successful');
    expect(await statusOf(unpaid.reference)).toBe('credited');
  });
});

describe('ledger.audit', () => {
  it('When the books agree, then no mismatch; when a balance is edited by hand, then the audit records it and logs LEDGER MISMATCH', async () => {
    stack.clock.set!(START);
    const org = await stack.createOrg({ units: 40 });
    const clean = await audit();
    expect(clean.mismatches).toBe(0);
    expect(clean.walletsChecked).toBeGreaterThan(0);

    await stack.db.query(q`UPDATE wallets SET units = units + 5 WHERE org_id = ${org.orgId}`);
    lines.length = 0;
    const r = await audit();
    expect(r.mismatches).toBe(1);
    const last = await stack.db.one(q`SELECT wallets_checked, mismatches FROM ledger_audits ORDER BY id DESC LIMIT 1`);
    expect(last.mismatches).toEqual([{ org_id: org.orgId, units: 45, ledger_units: 40 }]);
    const gauge = await stack.workers!.deps.metrics.registry.getSingleMetric('ledger_audit_mismatches')!.get();
    expect(gauge.values[0]!.value).toBe(1);
    const logged = lines.map((l) => JSON.parse(l)).find((l) => /LEDGER MISMATCH/.test(l.msg));
    expect(logged?.level).toBe(50);
    expect(logged?.mismatches).toEqual([{ org_id: org.orgId, units: 45, ledger_units: 40 }]);

    await stack.db.query(q`UPDATE wallets SET units = units - 5 WHERE org_id = ${org.orgId}`);
  });
});

describe('outbox.sweep', () => {
  it('When a receipt was left pending for over a minute, then the sweep queues it again and it is sent', async () => {
    const payload = {
      reference: 'TOP-1-00000000000000aa',
      org_id: 1,
      organisation: 'Lost Receipt Ltd',
      recipients: ['billing@example.com'],
      units: 100,
      bonus_units: 0,
      base_amount: 1_000_000,
      vat_amount: 75_000,
      service_charge: 26_523,
      total_amount: 1_101_523,
      currency: 'NGN',
      tenancy: 'hosted',
      loyalty_badge: null,
      credited_at: START.toISOString(),
    };
    const id = await stack.db.oneFirst(q`
      INSERT INTO outbox (kind, dedupe_key, payload, created_at)
      VALUES ('receipt_email', 'receipt-lost-test', ${sql.jsonb(payload)}, now() - interval '5 minutes') RETURNING id`);
    const r = await mailProcessors['outbox.sweep']!({}, job, stack.workers!.deps, log);
    expect(r.enqueued).toBeGreaterThanOrEqual(1);
    const end = Date.now() + 8000;
    while ((await stack.db.oneFirst(q`SELECT status FROM outbox WHERE id = ${id}`)) !== 'sent' && Date.now() < end) {
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(await stack.db.oneFirst(q`SELECT status FROM outbox WHERE id = ${id}`)).toBe('sent');
    // Sent is final: delivering again sends nothing.
    expect(await mailProcessors['outbox.deliver']!({ outboxId: Number(id) }, { attemptsMade: 0, opts: { attempts: 10 } } as Job, stack.workers!.deps, log)).toEqual({
      outcome: 'already_sent',
    });
  });
});
