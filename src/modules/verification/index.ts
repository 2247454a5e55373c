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
// Another module's lookups (the batches' rows): started, cancelled and read here; each one's end is
// reported by its job (the catalog's batch.lookup-settled), never by a call out of this module.
export { cancelLookup, startLookup, type LookupQuery } from './start.ts';
export { lookupOutcomes, type LookupOutcome } from './outcomes.ts';
export { isFixtureNin, isFixtureVnin } from './fixtures.ts';
export { VNIN_REFUSAL_DETAIL, vninHash } from './vnin.ts';
export { ninBody, phoneBody, VNIN_INVALID } from './verification.schemas.ts';
export { newReferenceId } from './run.ts';
export { SUBSCRIPTION_REQUIRED } from './verify.ts';
export { consentSchema, type Consent } from './consent.ts';
// A verification link's submission: run under a reference the links module chose, and read back by its sweep.
export { faceResultsOf, linkEndsOf, longestLinkRunMs, verifyForLink, type LinkOutcome, type LinkStatus } from './link-run.ts';
// The one verdict (verified or not, and why), for the links module's events and page.
export { faceSummary, verdictOfLink, verdictSchema } from './verdict.ts';
export type { FaceAnswer } from './face-kept.ts';
