import express, { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { parseInput, requireContentType } from '../../lib/http.ts';
import { principalOf } from '../auth/index.ts';
import { isPortalRequest } from '../../lib/portal-request.ts';
import { initializeTopup, quoteTopup, verifyTopup } from './topup.service.ts';
import { initializeForm, verifyForm } from './topup.schemas.ts';

/** Both top-up endpoints take a form body, like /login. */
export function topupRoutes(ctx: AppContext): Router {
  const r = Router();
  const form = [requireContentType('form'), express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 10 })];

  r.post('/topup/initialize', ctx.authenticate, ctx.rateLimit, ...form, async (req, res) => {
    const input = parseInput(initializeForm, req.body);
    // A top-up started in the portal brings the payer back to the portal's page for it.
    const base = ctx.config.PUBLIC_BASE_URL ? ctx.config.publicBaseUrl : `${req.protocol}://${req.get('host')}`;
    const returnUrl = isPortalRequest(req) ? `${base}/portal/top-up/return` : undefined;
    res.json(await initializeTopup(ctx, principalOf(req), input.units, returnUrl ? { returnUrl } : {}));
  });

  r.get('/topup/quote', ctx.authenticate, ctx.rateLimit, async (req, res) => {
    const input = parseInput(initializeForm, req.query);
    res.json(await quoteTopup(ctx, principalOf(req), input.units));
  });

  r.post('/topup/verify', ctx.authenticate, ctx.rateLimit, ...form, async (req, res) => {
    const input = parseInput(verifyForm, req.body);
    res.json(await verifyTopup(ctx, principalOf(req), input.reference, req.id));
  });

  return r;
}
