import { auditLedger } from '../../src/modules/wallet/index.ts';
import type { ProcessorMap } from '../../src/context.ts';

// Queue: maintenance (ledger.audit).
export const walletProcessors: ProcessorMap = {
  'ledger.audit': async (_payload, _job, deps, log) => auditLedger(deps, log),
};
