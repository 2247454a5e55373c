import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../../context.ts';
import { listReasons } from './reasons.service.ts';

export function reasonsRoutes(ctx: AppContext): Router {
  const r = Router();
  const list = async (_req: Request, res: Response) => {
    res.json({ data: await listReasons(ctx) });
  };
  r.get('/nimc-reasons', ctx.authenticate, ctx.rateLimit, list);
  // Provider-neutral name of the same list.
  r.get('/upstream-reasons', ctx.authenticate, ctx.rateLimit, list);
  return r;
}
