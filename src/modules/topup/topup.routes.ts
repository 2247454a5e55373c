import express, { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { parseInput, requireContentType } from '../../lib/http.ts';
import { principalOf } from '../auth/index.ts';
import { initializeTopup, verifyTopup } from './topup.service.ts';
import { initializeForm, verifyForm } from './topup.schemas.ts';

/** Both top-up endpoints take a form body, like /login. */
export function topupRoutes(ctx: AppContext): Router {
  const r = Router();
  const form = [requireContentType('form'), express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 10 })];

  r.post('/topup/initialize', ctx.authenticate, ctx.rateLimit, ...form, async (req, res) => {
    const input = parseInput(initializeForm, req.body);
    res.json(await initializeTopup(ctx, principalOf(req), input.units));
  });

  r.post('/topup/verify', ctx.authenticate, ctx.rateLimit, ...form, async (req, res) => {
    const input = parseInput(verifyForm, req.body);
    res.json(await verifyTopup(ctx, principalOf(req), input.reference, req.id));
  });

  return r;
}
