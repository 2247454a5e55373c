import express, { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { parseInput, requireContentType } from '../../lib/http.ts';
import { allowFirst, clientAddress, principalOf } from '../auth/index.ts';
import { getAutoTopup, putAutoTopup, requirePersonAccountsKeeper } from './auto-settings.ts';
import { autoTopupPut } from './auto.schemas.ts';

/** GET and PUT /settings/auto-topup: administrators and finance officers, in person (issue 34 item 6). */
export function autoTopupRoutes(ctx: AppContext): Router {
  const r = Router();
  const guard = [ctx.authenticate, ctx.rateLimit];

  r.get('/settings/auto-topup', ...guard, async (req, res) => {
    res.json(await getAutoTopup(ctx, principalOf(req)));
  });

  r.put('/settings/auto-topup', ...guard, allowFirst(requirePersonAccountsKeeper), requireContentType('json'), express.json({ limit: '4kb' }), async (req, res) => {
    const p = principalOf(req);
    const input = parseInput(autoTopupPut, req.body);
    res.json(await putAutoTopup({ db: ctx.db, clock: ctx.clock, signIn: ctx }, p, input, clientAddress(req)));
  });
  return r;
}
