import { followDebit } from '../../src/modules/alerts/index.ts';
import { eraseExpired, runLookupJob, sweepPending } from '../../src/modules/verification/index.ts';
import type { ProcessorMap } from '../../src/context.ts';

// Queues: lookups (verification.lookup), maintenance (verification.sweep, retention.erase).
export const verificationProcessors: ProcessorMap = {
  'verification.lookup': (payload, job, deps, log, token) =>
    runLookupJob({ ...deps, followDebit: (orgId, followUp, l) => followDebit(deps, orgId, followUp, l) }, payload, job, log, token),
  'verification.sweep': (_payload, _job, deps, log) => sweepPending(deps, log),
  'retention.erase': (_payload, _job, deps) => eraseExpired(deps),
};
