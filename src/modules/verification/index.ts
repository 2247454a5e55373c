// The verification module's one door: its HTTP routes, and the jobs the workers run.
export { verificationRoutes } from './verification.routes.ts';
export { verificationHistoryRoutes } from './history.routes.ts';
export { faceOfPayload, newLookupReport, releaseLookupSlot, runLookup, type AuthorityGuards } from './lookup.job.ts';
export { createInlineLookup } from './inline-lookup.ts';
export { RetryLater } from './background.ts';
export { reservePendingSlots } from './pending.ts';

export { eraseExpired, sweepPending } from './maintenance.ts';
export { register as registerVerificationOpenApi } from './verification.openapi.ts';
export { register as registerVerificationHistoryOpenApi } from './history.openapi.ts';
export { eraseSubjectData, exportSubject, type WaitingBatchRow, type WaitingQueries } from './subjects.ts';
export { subjectHash } from './subject.ts';
export { resealIdempotencyAnswers, resealVerifications, sealedVerificationCounts } from './reseal.ts';
// The one way to start a verification (a route's, a batch row's, a link's), and to cancel a queued
// one; how they ended is read here. A batch lookup's end is reported by its job (the catalog's
// batch.lookup-settled), never by a call out of this module.
export { startVerification, type Asker, type LinkMaker } from './entrance.ts';
export type { VerifyDeps } from './run.ts';
export { cancelLookup, type LookupQuery } from './start.ts';
export { faceResultsOf, lookupOutcomes, type LookupOutcome } from './outcomes.ts';
export type { FaceAnswer } from './face-kept.ts';
export type { VerificationStatus } from './verification.schemas.ts';
export { isFixtureNin, isFixtureVnin } from './fixtures.ts';
export { isVninRefusal, VNIN_REFUSAL_DETAIL, vninHash } from './vnin.ts';
export { ninBody, phoneBody, VNIN_INVALID } from './verification.schemas.ts';
export { newReferenceId } from './run.ts';
export { SUBSCRIPTION_REQUIRED } from './verify.ts';
export { consentSchema, type Consent, type PersonsOwnConsent } from './consent.ts';
