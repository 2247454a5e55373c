import { Router } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { AppError } from '../../lib/errors.ts';
import { parseInput, parsePathParams, serialIdParam } from '../../lib/http.ts';
import { requirePlatformAdmin } from '../ops/index.ts';
import { pageQuery } from './platform.schemas.ts';
import { ORGANISATION_NOT_FOUND, organisationById, organisationPage } from './platform.service.ts';

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
    const { id } = parsePathParams(z.object({ id: serialIdParam }), req.params, new AppError('not_found', ORGANISATION_NOT_FOUND));
    res.json(await organisationById(ctx.db, id));
  });
  return r;
}
