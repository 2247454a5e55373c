import type { Job } from 'bullmq';
import { CheckIntegrityConstraintViolationError, sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.ts';
import { walletProcessors } from '../../workers/processors/wallet.ts';
import { startStack, type Stack } from '../setup/harness.ts';

// Test queries read loosely typed rows; the service's own queries are the typed ones.
const q = sql.type(z.record(z.string(), z.any()));

let stack: Stack;
const lines: string[] = [];
const log = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(l) } });
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack?.close());

// The ledger audit as its scheduler runs it.
const audit = () => walletProcessors['ledger.audit']!({}, {} as Job, stack.workers!.deps, log);

/** The CHECK constraint a statement broke, or null when it went through. */
async function violated(statement: Promise<unknown>): Promise<string | null> {
  try {
    await statement;
    return null;
  } catch (err) {
    return err instanceof CheckIntegrityConstraintViolationError ? (err.constraint ?? 'unnamed') : `other: ${(err as Error).message}`;
  }
}

describe('Invariants in the schema', () => {
  it('When a verification, fixture or top-up ledger line has no reference, then the database refuses it; an adjustment needs none', async () => {
    const org = await stack.createOrg({ units: 2 });
    for (const kind of ['verification', 'fixture_verification', 'topup']) {
      const insert = stack.db.query(q`
        INSERT INTO wallet_transactions (org_id, kind, units_delta, units_before, units_after) VALUES (${org.orgId}, ${kind}, 0, 2, 2)`);
      expect(await violated(insert), kind).toBe('wallet_transactions_reference_required');
    }
    const adjustment = stack.db.query(q`
      INSERT INTO wallet_transactions (org_id, kind, units_delta, units_before, units_after) VALUES (${org.orgId}, 'adjustment', 0, 2, 2)`);
    expect(await violated(adjustment)).toBeNull();
  });

  it('When a verification would hold a unit after it is decided, then the database refuses it', async () => {
    const org = await stack.createOrg({ units: 2 });
    const found = await stack.api('POST', '/v1/verify-nin', { token: org.admin.token, json: { nin: '23456789012', reason: 'corporate' } });
    expect(found.status).toBe(200);
    const ref = found.body.data.reference_id as string;
    const mark = stack.db.query(q`UPDATE verifications SET holds_unit = true WHERE reference_id = ${ref}`);
    expect(await violated(mark)).toBe('verifications_hold_only_while_pending');
    const insert = stack.db.query(q`
      INSERT INTO verifications (reference_id, org_id, user_id, mode, reason, status, holds_unit, expires_at)
      SELECT 'REF-HOLDSFAILED1', ${org.orgId}, id, 'nin', 'corporate', 'failed', true, now() FROM users WHERE org_id = ${org.orgId} LIMIT 1`);
    expect(await violated(insert)).toBe('verifications_hold_only_while_pending');
  });
});

describe('ledger.audit: reserved units', () => {
  it('When every held unit belongs to a pending verification, then no reserved mismatch; when reserved drifts either way, then the audit stores it, sets the gauge and logs RESERVED MISMATCH', async () => {
    const org = await stack.createOrg({ units: 10 });
    const found = await stack.api('POST', '/v1/verify-nin', { token: org.admin.token, json: { nin: '23456789012', reason: 'corporate' } });
    expect(found.status).toBe(200);
    const clean = await audit();
    expect(clean).toMatchObject({ mismatches: 0, reservedMismatches: 0 });

    // A unit reserved with no verification holding it, and (another organisation) a holder without its unit.
    const other = await stack.createOrg({ units: 3 });
    await stack.db.query(q`UPDATE wallets SET reserved = reserved + 2 WHERE org_id = ${org.orgId}`);
    await stack.db.query(q`
      INSERT INTO verifications (reference_id, org_id, user_id, mode, reason, status, holds_unit, expires_at)
      SELECT 'REF-HOLDSNOUNIT1', ${other.orgId}, id, 'nin', 'corporate', 'pending', true, now() + interval '1 day' FROM users WHERE org_id = ${other.orgId} LIMIT 1`);
    lines.length = 0;
    const r = await audit();
    expect(r).toMatchObject({ mismatches: 0, reservedMismatches: 2 });
    const expected = [
      { org_id: org.orgId, reserved: 2, holding: 0 },
      { org_id: other.orgId, reserved: 0, holding: 1 },
    ];
    const last = await stack.db.one(q`SELECT mismatches, reserved_mismatches FROM ledger_audits ORDER BY id DESC LIMIT 1`);
    expect(last.mismatches).toEqual([]);
    expect([...last.reserved_mismatches].sort((a, b) => a.org_id - b.org_id)).toEqual(expected);
    const gauge = await stack.workers!.deps.metrics.registry.getSingleMetric('ledger_audit_reserved_mismatches')!.get();
    expect(gauge.values[0]!.value).toBe(2);
    const logged = lines.map((l) => JSON.parse(l)).find((l) => /RESERVED MISMATCH/.test(l.msg));
    expect(logged?.level).toBe(50);
    expect(logged?.count).toBe(2);

    await stack.db.query(q`UPDATE wallets SET reserved = reserved - 2 WHERE org_id = ${org.orgId}`);
    await stack.db.query(q`UPDATE verifications SET holds_unit = false, status = 'failed' WHERE reference_id = 'REF-HOLDSNOUNIT1'`);
    expect(await audit()).toMatchObject({ reservedMismatches: 0 });
    const reset = await stack.workers!.deps.metrics.registry.getSingleMetric('ledger_audit_reserved_mismatches')!.get();
    expect(reset.values[0]!.value).toBe(0);
  });
});
