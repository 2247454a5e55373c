import { pruneWebhookHistory } from '../../src/modules/webhooks/index.ts';
import type { ProcessorMap } from '../../src/context.ts';

// Queue: maintenance (webhooks.prune). Deliveries themselves are not BullMQ jobs (the dispatcher
// claims them from PostgreSQL); only the retention of their log is.
export const webhookProcessors: ProcessorMap = {
  'webhooks.prune': async (_payload, _job, deps) => pruneWebhookHistory(deps),
};
