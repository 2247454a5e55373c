// The top-up module's door: entry points and other modules import top-up from here only.
export { creditTopup } from './credit.ts';
export { recheckAbandoned } from './recheck.ts';
export { refundTopup, type OperatorDeps } from './refund.ts';
export { resolveMismatch } from './resolve.ts';
export { closePending as closePendingTopups, countPending as countPendingTopups } from './troubled.repository.ts';
export { sweepTopups } from './sweep.ts';
export { register as registerTopupOpenApi } from './topup.openapi.ts';
export { register as registerTopupHistoryOpenApi } from './history.openapi.ts';
export { topupRoutes } from './topup.routes.ts';
export { topupHistoryRoutes } from './history.routes.ts';
export { webhookRoutes } from './webhook.routes.ts';
export { lastCreditedTopups } from './latest.ts';
export { invoiceNumbers, refundsBetween } from './invoice.repository.ts';
export { autoTopupRoutes } from './auto.routes.ts';
export { register as registerAutoTopupOpenApi } from './auto.openapi.ts';
export { queueAutoTopup, runAutoCharge } from './auto-charge.ts';
export { resealSavedCards, sealedCardCounts } from './saved-card.ts';
