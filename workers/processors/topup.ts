import { UnrecoverableError } from 'bullmq';
import { describe } from '../../src/lib/errors.ts';
import { ProcessorError } from '../../src/adapters/payment-processor/paystack.ts';
import { wakeBatches } from '../../src/modules/batches/index.ts';
import { deliverMail, sweepOutbox } from '../../src/modules/mail/index.ts';
import { creditTopup, recheckAbandoned, runAutoCharge, sweepTopups } from '../../src/modules/topup/index.ts';
import type { Logger } from '../../src/lib/logger.ts';
import type { ProcessorMap, WorkerDeps } from '../../src/context.ts';

/** A refused key or a malformed answer will not fix itself by waiting: fail now, loudly. */
async function failFastOnFinalProcessorError<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ProcessorError && !err.retryable) throw new UnrecoverableError(`processor ${err.code}: ${err.message}`);
    throw err;
  }
}

/** A credited wallet resumes its organisation's paused batches (the periodic feed would, later). */
async function afterCredit(deps: WorkerDeps, outcome: string, reference: string | null | undefined, log: Logger): Promise<void> {
  const orgId = Number(/^TOP-(\d+)-/.exec(reference ?? '')?.[1]);
  if (outcome === 'credited' && reference && orgId > 0) {
    await wakeBatches(deps.producer, orgId, reference).catch((err: unknown) => log.warn({ err: describe(err) }, 'batches not woken; the periodic feed resumes them'));
  }
}

export const topupProcessors: ProcessorMap = {
  'topup.credit': (payload, _job, deps, log) =>
    failFastOnFinalProcessorError(async () => {
      const result = await creditTopup(deps, payload.reference, payload.source, log);
      await afterCredit(deps, result.outcome, payload.reference, log);
      return result;
    }),

  'topup.auto_charge': (payload, _job, deps, log) =>
    failFastOnFinalProcessorError(async () => {
      const result = await runAutoCharge(deps, payload.chargeId, log);
      await afterCredit(deps, result.outcome, result.reference, log);
      return result;
    }),

  'outbox.deliver': async (payload, job, deps, log) => {
    const finalAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    return deliverMail(deps, payload.outboxId, { finalAttempt }, log);
  },

  'outbox.sweep': async (_payload, _job, deps) => sweepOutbox(deps),

  'topup.sweep': async (_payload, _job, deps, log) => sweepTopups(deps, log),

  'topup.recheck': async (_payload, _job, deps, log) => recheckAbandoned(deps, log),
};
