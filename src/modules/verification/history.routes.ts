import { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { parseInput } from '../../lib/http.ts';
import { principalOf } from '../auth/index.ts';
import { listVerifications } from './history.ts';
import { verificationListQuery } from './history.schemas.ts';

export function verificationHistoryRoutes(ctx: AppContext): Router {
  const r = Router();
  r.get('/verifications', ctx.authenticate, ctx.rateLimit, async (req, res) => {
    res.json(await listVerifications(ctx.db, principalOf(req), parseInput(verificationListQuery, req.query)));
  });
  return r;
}
