import { creditTopup, recheckAbandoned, runAutoCharge, sweepTopups } from '../../src/modules/topup/index.ts';
import type { ProcessorMap } from '../../src/context.ts';

// Queues: credits (topup.credit, topup.auto_charge), maintenance (topup.sweep, topup.recheck).
export const topupProcessors: ProcessorMap = {
  'topup.credit': (payload, _job, deps, log) => creditTopup(deps, payload.reference, payload.source, log),
  'topup.auto_charge': (payload, _job, deps, log) => runAutoCharge(deps, payload.chargeId, log),
  'topup.sweep': async (_payload, _job, deps, log) => sweepTopups(deps, log),
  'topup.recheck': async (_payload, _job, deps, log) => recheckAbandoned(deps, log),
};
