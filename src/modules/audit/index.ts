// The audit module's one door: the append-only, hash-chained trail of who did what. Every module may
// record through recordAudit; the module imports no other module (sign-ins are audited, so it sits
// below authentication), and its route takes the administrator check from the app.
export { actorOf, type AuditAction, type AuditActor } from './actions.ts';
export { auditContext, canonicalOf, recordAudit } from './record.ts';
// For a statement of another module that records the events of what it reads (the requery).
export { chainAppend, EVENT_COLUMNS, eventTexts } from './audit.repository.ts';
export type { CanonicalFields } from './canonical.ts';
export { verifyChain } from './chain.ts';
export { auditRoutes } from './audit.routes.ts';
export { register as registerAuditOpenApi } from './audit.openapi.ts';
