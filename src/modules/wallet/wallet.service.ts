import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { AppError } from '../../lib/errors.ts';
import * as repo from './wallet.repository.ts';

export type { WalletTransaction } from './wallet.repository.ts';
export { recordFixtureCall, addUnits, getBalance, listTransactions, findLedgerMismatches, findReservedMismatches, countWallets } from './wallet.repository.ts';

/** Operator adjustment, recorded as a ledger line; refused if it would leave held units uncovered. */
export async function adjustWallet(db: DatabasePool, orgId: number, units: number, note: string) {
  if (!Number.isInteger(units) || units === 0) throw new AppError('bad_request', 'units must be a non-zero integer');
  if (!note.trim()) throw new AppError('bad_request', 'a note is required');
  const moved = await repo.addUnits(db, {
    orgId,
    units,
    kind: 'adjustment',
    amountKobo: 0,
    reference: null,
    details: { note: note.trim() },
  });
  if (!moved) throw new AppError('bad_request', 'adjustment would make the balance negative (or the organisation does not exist)');
  return moved;
}

export async function balanceOf(db: CommonQueryMethods, orgId: number) {
  return (await repo.getBalance(db, orgId)) ?? { units: 0, reserved: 0 };
}
