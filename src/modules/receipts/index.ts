// The receipts module's door: the person's consent receipt (/r/<token>: page, PDF, ISO/IEC TS 27560
// JSON, e-mailed on request), given after a verification link's submission, and the organisation's
// copy (GET /verifications/{reference_id}/receipt) with its part of the OpenAPI document.
export { issueReceipt } from './receipt.ts';
export { receiptPageRoutes, receiptsRoutes } from './receipts.routes.ts';
export { register as registerReceiptsOpenApi } from './receipts.openapi.ts';
