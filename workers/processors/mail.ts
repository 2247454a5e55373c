import { deliverMail, sweepOutbox } from '../../src/modules/mail/index.ts';
import { isFinalAttempt, type ProcessorMap } from '../../src/context.ts';

// Queues: emails (outbox.deliver), maintenance (outbox.sweep).
export const mailProcessors: ProcessorMap = {
  'outbox.deliver': async (payload, job, deps, log) => deliverMail(deps, payload.outboxId, { finalAttempt: isFinalAttempt(job) }, log),
  'outbox.sweep': async (_payload, _job, deps) => sweepOutbox(deps),
};
