import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createOrganisation } from '../../src/modules/organisations/index.ts';
import { adjustWallet, captureHeldUnit, lowBalanceDue } from '../../src/modules/wallet/index.ts';
import { useTestPool } from '../setup/harness.ts';

// A verification's capture statement says what its debit must be followed by (wallet/holds.ts), so the
// worker reads nothing more after the usual debit. That is only safe if it never says "nothing" when
// something is due. Here, on generated balances, lines, alert states and automatic top-up settings, in
// real PostgreSQL: its low-balance answer agrees with the alert's own read (lowBalanceDue), and every
// charge the debit's trigger queued was announced (autoTopupDue), and it announces one exactly when
// the trigger's condition holds.

const q = sql.type(z.record(z.string(), z.any()));
const pool = useTestPool({ maxPoolSize: 2 });


const newOrg = async (units: number): Promise<number> => {
  const org = await createOrganisation(
    pool.db,
    { name: `Org ${randomBytes(3).toString('hex')}`, tenancy: 'hosted', affiliate: false, businessRegistration: 'RC-123456', dataProtection: 'NDPC-7890' },
    { unitCostKobo: 10_000, minTopupUnits: 100 },
  );
  if (units > 0) await adjustWallet(pool.db, org.id, units, 'test funding');
  return org.id;
};

/** One held unit captured through the statement the lookup's settlement uses (its `decide` part reduced to the organisation). */
const captureOne = async (orgId: number) => {
  await pool.db.query(q`UPDATE wallets SET reserved = reserved + 1 WHERE org_id = ${orgId}`);
  return captureHeldUnit(pool.db, { decide: sql.fragment`SELECT ${orgId}::bigint AS org_id, '{}'::jsonb AS details`, reference: `ref-${randomBytes(6).toString('hex')}` });
};

describe('the debit says what must follow it', () => {
  it('When a held unit is captured, then the follow-up agrees with the low-balance read and announces every automatic top-up charge its trigger queued', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          units: fc.integer({ min: 1, max: 40 }),
          line: fc.option(fc.integer({ min: 1, max: 40 }), { nil: null }),
          alerted: fc.boolean(),
          auto: fc.option(fc.record({ enabled: fc.boolean(), below: fc.integer({ min: 1, max: 40 }) }), { nil: null }),
        }),
        async ({ units, line, alerted, auto }) => {
          const orgId = await newOrg(units);
          await pool.db.query(q`UPDATE organisations SET low_balance_units = ${line} WHERE id = ${orgId}`);
          // The line's trigger clears the flag when the line changes: set it afterwards.
          await pool.db.query(q`UPDATE wallets SET low_balance_alerted = ${alerted} WHERE org_id = ${orgId}`);
          if (auto) {
            await pool.db.query(q`
              INSERT INTO auto_topup_settings (org_id, enabled, below_units, units, max_per_day, updated_at)
              VALUES (${orgId}, ${auto.enabled}, ${auto.below}, 100, 3, now())`);
          }
          const followUp = await captureOne(orgId);
          expect(followUp).not.toBeNull();
          const left = units - 1;
          expect(followUp!.lowBalanceDue).toBe(await lowBalanceDue(pool.db, orgId));
          expect(followUp!.lowBalanceDue).toBe(line !== null && left < line && !alerted);
          expect(followUp!.autoTopupDue).toBe(auto !== null && auto.enabled && left < auto.below);
          const queued = await pool.db.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM auto_topup_charges WHERE org_id = ${orgId} AND status = 'queued'`);
          // The trigger queues only what the follow-up announced, and (no charge before, the day's
          // limit not reached) all of it.
          expect(queued).toBe(followUp!.autoTopupDue ? 1 : 0);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('When nothing was held for the organisation, then nothing is captured and there is no follow-up', async () => {
    const orgId = await newOrg(5);
    const none = await captureHeldUnit(pool.db, { decide: sql.fragment`SELECT org_id, '{}'::jsonb AS details FROM wallets WHERE false`, reference: `ref-${randomBytes(6).toString('hex')}` });
    expect(none).toBeNull();
    expect(await pool.db.oneFirst(sql.type(z.object({ units: z.coerce.number() }))`SELECT units FROM wallets WHERE org_id = ${orgId}`)).toBe(5);
  });
});
