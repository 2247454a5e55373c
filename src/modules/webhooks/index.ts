// The webhooks module's door: the integrator's own endpoints over HTTP, the one function other modules
// call inside the transaction of a change to record its event (the outbox), and the workers' dispatcher.
// It imports mail and organisations only, so every module that reports an event may import it.
export { webhooksRoutes } from './webhooks.routes.ts';
export { recordWebhookEvent } from './record.ts';
export { startWebhookDispatcher } from './delivery.ts';
export { register as registerWebhooksOpenApi } from './webhooks.openapi.ts';
export { resealWebhookSecrets, sealedWebhookCounts } from './reseal.ts';
export { pruneWebhookHistory } from './retention.ts';
