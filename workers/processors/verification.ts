import type { ProcessorMap } from '../context.ts';

export const verificationProcessors: ProcessorMap = {};
