import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { AppError } from '../../lib/errors.ts';
import { recordAudit, type AuditActor } from '../audit/index.ts';
import * as repo from './wallet.repository.ts';

export type { WalletTransaction } from './wallet.repository.ts';
export { recordFixtureCalls, addUnits, getBalance, listTransactions, findLedgerMismatches, findReservedMismatches, countWallets } from './wallet.repository.ts';

/**
 * Operator adjustment, recorded as a ledger line and a `wallet.adjusted` event in one transaction;
 * refused if it would leave held units uncovered. `by`: the operator's command, or the service's
 * own (the sandbox's welcome units).
 */
export async function adjustWallet(db: DatabasePool, orgId: number, units: number, note: string, by: AuditActor = 'operator') {
  if (!Number.isInteger(units) || units === 0) throw new AppError('bad_request', 'units must be a non-zero integer');
  if (!note.trim()) throw new AppError('bad_request', 'a note is required');
  const moved = await db.transaction(async (tx) => {
    const line = await repo.addUnits(tx, {
      orgId,
      units,
      kind: 'adjustment',
      amountKobo: 0,
      reference: null,
      details: { note: note.trim() },
    });
    // The note is the operator's free text: the event keeps the numbers only.
    if (line) await recordAudit(tx, { orgId, actor: by, action: 'wallet.adjusted', target: `org:${orgId}`, details: { units, units_after: line.units_after } });
    return line;
  });
  if (!moved) throw new AppError('bad_request', 'adjustment would make the balance negative (or the organisation does not exist)');
  return moved;
}

export async function balanceOf(db: CommonQueryMethods, orgId: number) {
  return (await repo.getBalance(db, orgId)) ?? { units: 0, reserved: 0 };
}
