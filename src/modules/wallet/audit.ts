import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import type { JobResult } from '../../jobs/catalog.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Metrics } from '../../lib/metrics.ts';
import { countWallets, findLedgerMismatches, findReservedMismatches } from './wallet.service.ts';

type Mismatch = { org_id: number; units: number; ledger_units: number };
type ReservedMismatch = { org_id: number; reserved: number; holding: number };

/**
 * The ledger.audit job: every wallet balance must equal the sum of its ledger lines, and every
 * wallet's reserved units the number of its verifications holding a unit.
 */
export async function auditLedger(deps: { db: DatabasePool; metrics: Metrics }, log: Logger): Promise<JobResult<'ledger.audit'>> {
  // Each comparison is one statement, one snapshot: both sides are read at the same instant.
  const mismatches = await findLedgerMismatches(deps.db);
  const reservedRows = await findReservedMismatches(deps.db);
  const walletsChecked = await countWallets(deps.db);
  const rows = mismatches.map((m) => ({ org_id: m.org_id, units: m.units, ledger_units: m.ledger_units }));
  const reserved = reservedRows.map((m) => ({ org_id: m.org_id, reserved: m.reserved, holding: m.holding }));
  await insertLedgerAudit(deps.db, walletsChecked, rows, reserved);
  deps.metrics.ledgerMismatches.set(rows.length);
  deps.metrics.ledgerReservedMismatches.set(reserved.length);
  deps.metrics.ledgerAuditRuns.inc({ result: rows.length + reserved.length > 0 ? 'mismatch' : 'ok' });
  if (rows.length > 0) log.error({ mismatches: rows.slice(0, 50), count: rows.length }, 'LEDGER MISMATCH: wallet balance differs from its ledger');
  if (reserved.length > 0) {
    log.error({ mismatches: reserved.slice(0, 50), count: reserved.length }, 'RESERVED MISMATCH: wallet reserved units differ from the verifications holding a unit');
  }
  return { walletsChecked, mismatches: rows.length, reservedMismatches: reserved.length };
}

async function insertLedgerAudit(db: CommonQueryMethods, walletsChecked: number, mismatches: Mismatch[], reserved: ReservedMismatch[]): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO ledger_audits (wallets_checked, mismatches, reserved_mismatches)
    VALUES (${walletsChecked}, ${sql.jsonb(mismatches)}, ${sql.jsonb(reserved)})`);
}
