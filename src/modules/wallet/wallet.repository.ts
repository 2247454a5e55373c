import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';

// The wallet row is the hot spot of the whole service: every statement here touches it once, as the
// last statement before COMMIT, so its row lock is held for as short a time as possible. The hold,
// capture and release of a verification's unit are in holds.ts, each as one statement.

const balanceRow = z.object({ units: z.coerce.number(), reserved: z.coerce.number() });
const movedRow = z.object({ units_before: z.coerce.number(), units_after: z.coerce.number(), transaction_id: z.coerce.number() });

export async function getBalance(db: CommonQueryMethods, orgId: number) {
  return db.maybeOne(sql.type(balanceRow)`SELECT units, reserved FROM wallets WHERE org_id = ${orgId}`);
}

const fixtureLine = z.object({ reference: z.string(), transaction_id: z.coerce.number() });

/**
 * Fixture calls leave the balance alone: each ledger line reads the balance without locking the row.
 * `records` is the verifications' own INSERT ... RETURNING reference_id, org_id, details (jsonb):
 * the rows and their lines are one statement (one round trip, atomic without a transaction), one
 * zero line per row, however many rows it writes. A missing wallet makes its line's NOT NULL
 * balance fail, and with it the whole statement. `statement`: a name to prepare it under, when
 * `records` has one text whatever its values. Resolves to each line's reference and id.
 */
export async function recordFixtureCalls(db: CommonQueryMethods, m: { records: FragmentSqlToken; statement?: string }) {
  return db.any((m.statement ? sql.prepared(m.statement, fixtureLine) : sql.type(fixtureLine))`
    WITH v AS (
      ${m.records}
    )
    INSERT INTO wallet_transactions (org_id, kind, amount, units_delta, units_before, units_after, details, reference)
    SELECT v.org_id, 'fixture_verification', 0, 0, w.units, w.units, v.details || '{"fixture": true}'::jsonb, v.reference_id
    FROM v LEFT JOIN wallets w ON w.org_id = v.org_id
    RETURNING reference, id AS transaction_id`);
}

/** The organisation's wallet, empty, in the transaction that creates the organisation. */
export async function openWallet(db: CommonQueryMethods, orgId: number): Promise<void> {
  await db.query(sql.unsafe`INSERT INTO wallets (org_id) VALUES (${orgId})`);
}

/** Adds units (top-up credit or operator adjustment) with its ledger line, in one statement. */
export async function addUnits(
  db: CommonQueryMethods,
  m: {
    orgId: number;
    units: number;
    kind: 'topup' | 'adjustment';
    amountKobo: number;
    vatAmount?: number | null;
    serviceCharge?: number | null;
    reference: string | null;
    details: Record<string, unknown>;
  },
) {
  return db.maybeOne(sql.type(movedRow)`
    WITH w AS (
      UPDATE wallets SET units = units + ${m.units}
      WHERE org_id = ${m.orgId} AND units + ${m.units} >= reserved
      RETURNING units
    )
    INSERT INTO wallet_transactions (org_id, kind, amount, vat_amount, service_charge, units_delta, units_before, units_after, details, reference)
    SELECT ${m.orgId}, ${m.kind}, ${m.amountKobo}, ${m.vatAmount ?? null}, ${m.serviceCharge ?? null}, ${m.units}, w.units - ${m.units}, w.units,
           ${sql.jsonb(m.details as never)}, ${m.reference}
    FROM w
    RETURNING units_before, units_after, id AS transaction_id`);
}

const transactionRow = z.object({
  id: z.coerce.number(),
  kind: z.string(),
  amount: z.coerce.number(),
  vat_amount: z.coerce.number().nullable(),
  service_charge: z.coerce.number().nullable(),
  units_delta: z.coerce.number(),
  units_before: z.coerce.number(),
  units_after: z.coerce.number(),
  details: z.record(z.string(), z.unknown()),
  reference: z.string().nullable(),
  created_at: z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v).toISOString()),
});
export type WalletTransaction = z.infer<typeof transactionRow>;

export async function listTransactions(db: CommonQueryMethods, orgId: number, limit: number, beforeId?: number) {
  const cursor = beforeId ? sql.fragment`AND id < ${beforeId}` : sql.fragment``;
  return db.any(sql.type(transactionRow)`
    SELECT id, kind, amount, vat_amount, service_charge, units_delta, units_before, units_after, details, reference, created_at
    FROM wallet_transactions WHERE org_id = ${orgId} ${cursor} ORDER BY id DESC LIMIT ${limit}`);
}

const auditRow = z.object({ org_id: z.coerce.number(), units: z.coerce.number(), ledger_units: z.coerce.number() });

/** Wallets whose balance differs from the sum of their ledger lines. */
export async function findLedgerMismatches(db: CommonQueryMethods) {
  return db.any(sql.type(auditRow)`
    SELECT w.org_id, w.units, COALESCE(t.total, 0) AS ledger_units
    FROM wallets w
    LEFT JOIN (SELECT org_id, sum(units_delta) AS total FROM wallet_transactions GROUP BY org_id) t ON t.org_id = w.org_id
    WHERE w.units <> COALESCE(t.total, 0)`);
}

const reservedRow = z.object({ org_id: z.coerce.number(), reserved: z.coerce.number(), holding: z.coerce.number() });

/**
 * Wallets whose reserved units differ from the number of verifications holding one. One statement,
 * one snapshot: a hold, capture or release changes the wallet row and the verification row in one
 * statement, so a consistent pair is never seen half-done. Holding implies pending (a CHECK), so
 * the pending partial index finds the holders. (The verification rows are read here, not through the
 * verification module: it depends on this one.)
 */
export async function findReservedMismatches(db: CommonQueryMethods) {
  return db.any(sql.type(reservedRow)`
    SELECT w.org_id, w.reserved, COALESCE(v.holding, 0) AS holding
    FROM wallets w
    LEFT JOIN (
      SELECT org_id, count(*) AS holding FROM verifications WHERE status = 'pending' AND holds_unit GROUP BY org_id
    ) v ON v.org_id = w.org_id
    WHERE w.reserved <> COALESCE(v.holding, 0)`);
}

export async function countWallets(db: CommonQueryMethods): Promise<number> {
  return db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM wallets`);
}
