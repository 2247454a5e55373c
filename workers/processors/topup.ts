import type { ProcessorMap } from '../context.ts';

export const topupProcessors: ProcessorMap = {};
