import type { ProcessorMap } from '../context.ts';
import { eraseExpired, runLookup, sweepPending } from '../../src/modules/verification/verification.service.ts';

export const verificationProcessors: ProcessorMap = {
  'verification.lookup': (payload, job, deps, log) =>
    runLookup(deps, payload.referenceId, log, { sealedQuery: payload.query, firstRun: job.attemptsStarted <= 1 && job.stalledCounter === 0 }),
  'verification.sweep': (_payload, _job, deps, log) => sweepPending(deps, log),
  'retention.erase': (_payload, _job, deps) => eraseExpired({ ...deps, redis: deps.producer.redis }),
};
