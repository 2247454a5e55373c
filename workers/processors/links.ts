import { sweepSubmissions } from '../../src/modules/links/index.ts';
import type { ProcessorMap } from '../../src/context.ts';

// Queue: maintenance (links.sweep).
export const linkProcessors: ProcessorMap = {
  'links.sweep': (_payload, _job, deps, log) => sweepSubmissions(deps, log),
};
