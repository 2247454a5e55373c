// The wallet module's one door: balances, credits, adjustments, the ledger, and the hold, capture and
// release of a verification's unit.
export { adjustWallet, balanceOf } from './wallet.service.ts';
export { addUnits, openWallet, findLedgerMismatches, findReservedMismatches, listTransactions, recordFixtureCalls } from './wallet.repository.ts';
export { captureHeldUnit, debitFaceMatch, FOLLOW_UP_BOTH, holdUnit, releaseHeldUnit, spendableUnits, type DebitFollowUp } from './holds.ts';
export { auditLedger } from './audit.ts';
export { ledgerRoutes } from './ledger.routes.ts';
export { register as registerLedgerOpenApi } from './ledger.openapi.ts';
export { claimLowBalanceAlert, lowBalanceDue } from './low-balance.ts';
export { ledgerMonth } from './month.ts';
export { faceMatchesNote } from './line-description.ts';
