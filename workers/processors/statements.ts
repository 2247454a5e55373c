import { mailMonthlyStatements } from '../../src/modules/statements/index.ts';
import type { ProcessorMap } from '../../src/context.ts';

// Queue: maintenance (statements.mail).
export const statementProcessors: ProcessorMap = {
  'statements.mail': async (_payload, _job, deps, log) => mailMonthlyStatements(deps, log),
};
