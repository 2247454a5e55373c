import { UnrecoverableError } from 'bullmq';
import { ProcessorError } from '../../src/adapters/payment-processor/paystack.ts';
import { creditTopup, deliverReceipt, recheckAbandoned, sweepOutbox, sweepTopups } from '../../src/modules/topup/index.ts';
import type { ProcessorMap } from '../context.ts';

export const topupProcessors: ProcessorMap = {
  'topup.credit': async (payload, _job, deps, log) => {
    try {
      return await creditTopup(deps, payload.reference, payload.source, log);
    } catch (err) {
      // A refused key or a malformed answer will not fix itself by waiting: fail now, loudly.
      if (err instanceof ProcessorError && !err.retryable) throw new UnrecoverableError(`processor ${err.code}: ${err.message}`);
      throw err;
    }
  },

  'outbox.deliver': async (payload, job, deps, log) => {
    const finalAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    return deliverReceipt(deps, payload.outboxId, { finalAttempt }, log);
  },

  'outbox.sweep': async (_payload, _job, deps) => sweepOutbox(deps),

  'topup.sweep': async (_payload, _job, deps, log) => sweepTopups(deps, log),

  'topup.recheck': async (_payload, _job, deps, log) => recheckAbandoned(deps, log),
};
