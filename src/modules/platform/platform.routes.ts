import { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { parseInput } from '../../lib/http.ts';
import { requirePlatformAdmin } from '../ops/index.ts';
import { pageQuery } from './platform.schemas.ts';
import { organisationById, organisationPage } from './platform.service.ts';

/** GET /platform/organisations[/{id}]: the platform administrators' JSON view of every organisation. */
export function platformRoutes(ctx: AppContext): Router {
  const r = Router();
  const guard = [ctx.authenticate, ctx.rateLimit, requirePlatformAdmin];
  r.get('/platform/organisations', ...guard, async (req, res) => {
    const q = parseInput(pageQuery, req.query);
    res.setHeader('Cache-Control', 'no-store');
    res.json(await organisationPage(ctx.db, q));
  });
  r.get('/platform/organisations/:id', ...guard, async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.json(await organisationById(ctx.db, String(req.params.id)));
  });
  return r;
}
