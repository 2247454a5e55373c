import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { z } from 'zod';
import type { OutageState } from './outage.ts';
import { outageSchema, type OutageRequest, type SimSettings } from './settings.ts';
import type { SimStats } from './stats.ts';

/**
 * The simulator's own control API, for benchmarks that run it as a separate process. It lives
 * under /__sim, answers only calls carrying `X-Sim-Control: <controlToken>` (never the authority's
 * Bearer key, so an authority client cannot reach it by mistake) and is never counted as a call.
 */
export const CONTROL_PREFIX = '/__sim';
export const CONTROL_HEADER = 'x-sim-control';

export interface SimControls {
  settings(): SimSettings;
  configure(patch: unknown): SimSettings;
  outage(request: OutageRequest): OutageState;
  outageState(): OutageState;
  stats(): SimStats;
  resetStats(): SimStats;
}

function refused(res: Response, error: unknown): void {
  if (!(error instanceof z.ZodError)) throw error;
  const fields = [...new Set(error.issues.map((i) => i.path.join('.') || 'body'))];
  res.status(400).json({ status: false, message: `Invalid control request: ${fields.join(', ')}` });
}

export function controlRoutes(token: string, controls: SimControls): Router {
  const router = Router();

  router.use((req: Request, res: Response, next: NextFunction) => {
    if (req.get(CONTROL_HEADER) !== token) {
      res.status(403).json({ status: false, message: 'Simulator control needs the X-Sim-Control header' });
      return;
    }
    next();
  });
  router.use(express.json({ limit: '16kb' }));

  router.get('/stats', (_req: Request, res: Response) => {
    res.json(controls.stats());
  });
  router.post('/reset', (_req: Request, res: Response) => {
    res.json(controls.resetStats());
  });
  router.get('/config', (_req: Request, res: Response) => {
    res.json({ settings: controls.settings(), outage: controls.outageState() });
  });
  router.post('/config', (req: Request, res: Response) => {
    try {
      res.json({ settings: controls.configure(req.body ?? {}), outage: controls.outageState() });
    } catch (err) {
      refused(res, err);
    }
  });
  router.post('/outage', (req: Request, res: Response) => {
    const parsed = outageSchema.safeParse(req.body);
    if (!parsed.success) return refused(res, parsed.error);
    res.json(controls.outage(parsed.data));
  });
  router.use((_req: Request, res: Response) => {
    res.status(404).json({ status: false, message: 'No such control endpoint' });
  });
  router.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return;
    const status = typeof err === 'object' && err !== null && 'status' in err && typeof err.status === 'number' ? err.status : 500;
    res.status(status).json({ status: false, message: status < 500 ? 'Malformed control request' : 'Simulator error' });
  });
  return router;
}
