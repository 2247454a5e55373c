import type { Job } from 'bullmq';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.ts';
import { topupProcessors } from '../../workers/processors/topup.ts';
import { startStack, type Stack } from '../setup/harness.ts';

// Test queries read loosely typed rows; the service's own queries are the typed ones.
const q = sql.type(z.record(z.string(), z.any()));

// A manual clock shared by API and workers; the scheduled jobs are run by calling their processors,
// as the scheduler would.
const START = new Date('2026-03-02T10:00:00+01:00');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let stack: Stack;
const log = createLogger({ level: 'silent' });
const job = {} as Job;

beforeAll(async () => {
  stack = await startStack({ manualClock: START, webhookMode: 'none' });
});
afterAll(async () => stack?.close());

const sweep = () => topupProcessors['topup.sweep']!({}, job, stack.workers!.deps, log);
const recheck = () => topupProcessors['topup.recheck']!({}, job, stack.workers!.deps, log);
const statusOf = (reference: string) => stack.db.oneFirst(q`SELECT status FROM topups WHERE reference = ${reference}`);
const unitsOf = (orgId: number) => stack.db.oneFirst(q`SELECT units::int FROM wallets WHERE org_id = ${orgId}`);

async function initialize(token: string, units = 100) {
  const r = await stack.api('POST', '/v1/topup/initialize', { token, form: { units } });
  expect(r.status).toBe(200);
  return r.body as { reference: string };
}

async function pay(reference: string) {
  const r = await fetch(`${stack.paymentSim.url}/__sim/transactions/${reference}/pay`, { method: 'POST' });
  expect(r.status).toBe(200);
}

describe('topup.recheck', () => {
  it('When an abandoned top-up is paid late and its webhook lost, then the daily re-check credits it; past 30 days it is no longer checked', async () => {
    stack.clock.set!(START);
    const org = await stack.createOrg({ units: 3 });
    const late = await initialize(org.admin.token, 200);
    const tooLate = await initialize(org.admin.token, 100);
    stack.clock.advance!(stack.config.TOPUP_SWEEP_MAX_AGE_HOURS * HOUR + HOUR);
    await sweep();
    expect(await statusOf(late.reference)).toBe('abandoned');
    expect(await statusOf(tooLate.reference)).toBe('abandoned');

    // Unpaid: the re-check asks the processor, which still says abandoned, and leaves it so.
    stack.clock.advance!(DAY);
    expect(await recheck()).toEqual({ checked: 2, credited: 0, refundDue: 0 });
    // Run again the same day: nothing is checked twice.
    stack.clock.advance!(HOUR);
    expect(await recheck()).toEqual({ checked: 0, credited: 0, refundDue: 0 });

    await pay(late.reference);
    stack.clock.advance!(DAY);
    expect(await recheck()).toMatchObject({ credited: 1 });
    expect(await statusOf(late.reference)).toBe('credited');
    expect(await unitsOf(org.orgId)).toBe(203);
    const line = await stack.db.one(q`SELECT details FROM wallet_transactions WHERE reference = ${late.reference}`);
    expect(line.details.source).toBe('recheck');

    // Thirty days after it was created a top-up is left alone, paid or not.
    await pay(tooLate.reference);
    stack.clock.set!(new Date(START.getTime() + stack.config.TOPUP_RECHECK_DAYS * DAY + HOUR));
    expect(await recheck()).toEqual({ checked: 0, credited: 0, refundDue: 0 });
    expect(await statusOf(tooLate.reference)).toBe('abandoned');
  });

  it('When a claimed refund has no refund at the processor, then the sweep puts it back to refund_due with the reason, sending nothing', async () => {
    stack.clock.set!(START);
    const org = await stack.createOrg();
    const t = await initialize(org.admin.token);
    await pay(t.reference);
    await stack.db.query(q`
      UPDATE topups SET status = 'refunding', paid_amount = total_amount, refund_claimed_at = ${sql.timestamp(START)} WHERE reference = ${t.reference}`);
    // Too recent: a command may still be sending it.
    await sweep();
    expect(await statusOf(t.reference)).toBe('refunding');
    stack.clock.advance!(stack.config.TOPUP_SWEEP_MIN_AGE_SECONDS * 1000 + 1000);
    await sweep();
    const row = await stack.db.one(q`SELECT status, refund_error FROM topups WHERE reference = ${t.reference}`);
    expect(row).toEqual({ status: 'refund_due', refund_error: 'no refund found at the processor; run topup:refund again' });
    const refunds = ((await (await fetch(`${stack.paymentSim.url}/__sim/refunds`)).json()) as any).data as unknown[];
    expect(refunds).toEqual([]);
  });
});
