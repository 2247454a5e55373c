// The face module's one door: the engine and jobs a face worker runs, and what the verification
// module asks of them (the API process never loads the model).
export { createFaceEngine, type FaceEngine, type FrameEngine } from './engine.ts';
export { checkedAsSelfie, runFaceCheck, runFaceCompare, type FaceJobDeps } from './face.job.ts';
export { checkSelfie, compareWithPhoto, comparisonTurnEnded, faceClientDeps, faceTurns, handOverComparison, inTurn as inFaceTurn, sealedImage, selfieRefused, type ComparisonSettlement, type FaceComparison } from './face.client.ts';
export { confidenceOf, DEFAULT_FACE_THRESHOLD, FACE_MODEL, FACE_SAME_PERSON_DISTANCE, isAcceptedImage } from './rules.ts';
export { faceReadiness, markFaceReady, READY_RENEW_MS } from './readiness.ts';
