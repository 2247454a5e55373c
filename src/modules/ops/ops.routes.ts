import { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { collectSealedRows } from './key-rotation.ts';
import { batchGauges } from '../batches/index.ts';
import { collectQueueDepth, metricsRoutes } from './metrics.ts';
import { queueBoardRoutes } from './queues.routes.ts';

/** Operator surfaces of the API process: /metrics and /admin/queues. Not part of the integrators' API. */
export function opsRoutes(ctx: AppContext): Router {
  collectQueueDepth(ctx.metrics, () => ctx.producer.queues());
  collectSealedRows(ctx.metrics, ctx.db, ctx.config.encryptionKeys);
  batchGauges(ctx.metrics.registry, ctx.db);
  const r = Router();
  r.use(metricsRoutes(ctx.metrics.registry, ctx.config.METRICS_TOKEN));
  r.use(queueBoardRoutes(ctx));
  return r;
}
