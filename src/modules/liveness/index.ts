// The liveness module's one door: sessions (a random order of head poses) and the judging of a
// session's frames. It loads no model: whoever judges (a face worker) passes in its frame analyser.
export { livenessRoutes } from './liveness.routes.ts';
export { register as registerLivenessOpenApi } from './liveness.openapi.ts';
