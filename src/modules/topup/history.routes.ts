import { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { parseInput } from '../../lib/http.ts';
import { principalOf } from '../auth/index.ts';
import { getTopup, listTopups } from './history.ts';
import { topupListQuery } from './history.schemas.ts';

export function topupHistoryRoutes(ctx: AppContext): Router {
  const r = Router();
  r.get('/topups', ctx.authenticate, ctx.rateLimit, async (req, res) => {
    res.json(await listTopups(ctx.db, principalOf(req), parseInput(topupListQuery, req.query)));
  });
  r.get('/topups/:reference', ctx.authenticate, ctx.rateLimit, async (req, res) => {
    res.json(await getTopup(ctx.db, principalOf(req), String(req.params.reference)));
  });
  return r;
}
