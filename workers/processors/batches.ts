import { lookupSettled, runFeed } from '../../src/modules/batches/index.ts';
import type { ProcessorMap } from '../../src/context.ts';

// Queue: batches (batch.feed, batch.lookup-settled). The batch flow's jobs: feeding batches, and the
// lookups' settlements their jobs report.
export const batchProcessors: ProcessorMap = {
  'batch.feed': (payload, _job, deps) => runFeed(deps, payload),
  'batch.lookup-settled': (payload, _job, deps) => lookupSettled(deps, payload),
};
