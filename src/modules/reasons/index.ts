// The reasons module's door: other modules and entry points import from here only.
export { register as registerReasonsOpenApi } from './reasons.openapi.ts';
export { reasonsRoutes } from './reasons.routes.ts';
export { listReasons, requireKnownReason, type ReasonsDeps } from './reasons.service.ts';
