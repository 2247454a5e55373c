// The verification module's one door: its HTTP routes, and the jobs the workers run.
export { verificationRoutes } from './verification.routes.ts';
export { verificationHistoryRoutes } from './history.routes.ts';
export { releaseLookupSlot, runLookup, type AuthorityGuards } from './lookup.job.ts';
export { createInlineLookup } from './inline-lookup.ts';

export { eraseExpired, sweepPending } from './maintenance.ts';
export { register as registerVerificationOpenApi } from './verification.openapi.ts';
export { register as registerVerificationHistoryOpenApi } from './history.openapi.ts';
