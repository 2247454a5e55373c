// The verification module's one door.
// The one entrance (entrance.ts: a route's, a batch row's or a link's verification), how
// verifications ended, and cancel. A batch lookup's end is reported by its job (the catalog's
// batch.lookup-settled), never by a call out of this module.
export { startVerification, type Asker, type LinkMaker, type LivenessFrameInput, type FacePart } from './entrance.ts';
export type { VerifyDeps } from './run.ts';
export { faceResultsOf, lookupOutcomes, type LookupOutcome } from './outcomes.ts';
export type { FaceAnswer } from './face-kept.ts';
export type { VerificationStatus } from './verification.schemas.ts';
export { cancelLookup, type LookupQuery } from './start.ts';

// What the processes wire: the HTTP routes and their OpenAPI, and the jobs the workers run.
export { verificationRoutes } from './verification.routes.ts';
export { verificationHistoryRoutes } from './history.routes.ts';
// The lookup job, as the worker runs it.
export { runLookupJob } from './lookup.processor.ts';
export { createInlineLookup } from './inline-lookup.ts';
// A live face match's comparison, as the face worker runs it: it settles the verification.
export { runComparisonJob } from './face-settle.ts';
export { eraseExpired, sweepPending } from './maintenance.ts';
export { register as registerVerificationOpenApi } from './verification.openapi.ts';
export { register as registerVerificationHistoryOpenApi } from './history.openapi.ts';

// What other modules still need: subject rights (the CLI) and reseal (key rotation); a batch's own
// checks at upload, which refuse as a single call would; a link's reference, chosen before it runs.
export { eraseSubjectData, exportSubject, type WaitingBatchRow, type WaitingQueries } from './subjects.ts';
export { subjectHash } from './subject.ts';
export { resealIdempotencyAnswers, resealVerifications, sealedVerificationCounts } from './reseal.ts';
export { reservePendingSlots } from './pending.ts';
export { isFixtureNin, isFixtureVnin } from './fixtures.ts';
export { isVninRefusal, VNIN_REFUSAL_DETAIL, vninHash } from './vnin.ts';
export { ninBody, phoneBody, VNIN_INVALID } from './verification.schemas.ts';
export { newReferenceId } from './run.ts';
export { SUBSCRIPTION_REQUIRED } from './verify.ts';
export { consentSchema, type Consent, type PersonsOwnConsent } from './consent.ts';
// A consent receipt's facts of a verification (the receipts module): never its record.
export { receiptFactsOf, type NoReceipt, type ReceiptFacts } from './receipt-facts.ts';
// The one verdict (verified or not, and why), for the links module's events and page.
export { faceSummary, verdictOfLink, verdictSchema, type VerdictFields } from './verdict.ts';
