import { UnrecoverableError } from 'bullmq';
import { describe } from '../../src/lib/errors.ts';
import { ProcessorError } from '../../src/adapters/payment-processor/paystack.ts';
import { wakeBatches } from '../../src/modules/batches/index.ts';
import { deliverMail, sweepOutbox } from '../../src/modules/mail/index.ts';
import { creditTopup, recheckAbandoned, sweepTopups } from '../../src/modules/topup/index.ts';
import type { ProcessorMap } from '../context.ts';

export const topupProcessors: ProcessorMap = {
  'topup.credit': async (payload, _job, deps, log) => {
    try {
      const result = await creditTopup(deps, payload.reference, payload.source, log);
      // A credited wallet resumes its organisation's paused batches (the periodic feed would, later).
      const orgId = Number(/^TOP-(\d+)-/.exec(payload.reference)?.[1]);
      if (result.outcome === 'credited' && orgId > 0) {
        await wakeBatches(deps.producer, orgId, payload.reference).catch((err: unknown) => log.warn({ err: describe(err) }, 'batches not woken; the periodic feed resumes them'));
      }
      return result;
    } catch (err) {
      // A refused key or a malformed answer will not fix itself by waiting: fail now, loudly.
      if (err instanceof ProcessorError && !err.retryable) throw new UnrecoverableError(`processor ${err.code}: ${err.message}`);
      throw err;
    }
  },

  'outbox.deliver': async (payload, job, deps, log) => {
    const finalAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    return deliverMail(deps, payload.outboxId, { finalAttempt }, log);
  },

  'outbox.sweep': async (_payload, _job, deps) => sweepOutbox(deps),

  'topup.sweep': async (_payload, _job, deps, log) => sweepTopups(deps, log),

  'topup.recheck': async (_payload, _job, deps, log) => recheckAbandoned(deps, log),
};
