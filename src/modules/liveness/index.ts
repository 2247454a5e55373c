// The liveness module's one door: sessions (a random order of head poses) and the judging of a
// session's frames, which a face worker runs with its own model passed in (this module loads none).
export { livenessRoutes } from './liveness.routes.ts';
export { register as registerLivenessOpenApi } from './liveness.openapi.ts';
export { runLivenessJudgement } from './liveness.job.ts';
export { livenessRules } from './frame-hashes.ts';
export { createSession } from './sessions.ts';
// A face match's liveness check (the verification module's entrance): judged before any lookup.
export { judgeSession, livenessFailed, type DecodedFrame } from './liveness.client.ts';
export { livenessCheckSchema, livenessResultSchema, STEPS, type LivenessCheck, type LivenessFrameInput } from './liveness.schemas.ts';
