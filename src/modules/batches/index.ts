// The batches module's door: its HTTP routes, the feed job, and what operators read.
export { batchRoutes } from './batches.routes.ts';
export { register as registerBatchesOpenApi } from './batches.openapi.ts';
export { lookupSettled, runFeed } from './feeder.ts';
export { batchGauges, showBatch } from './operators.ts';
export { waitingBatchRows } from './subjects.ts';
