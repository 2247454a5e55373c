import express, { Router } from 'express';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { AppContext } from '../../context.ts';
import { AppError } from '../../lib/errors.ts';
import { parseInput, requireContentType } from '../../lib/http.ts';
import { createLimiter, tooMany } from '../../lib/rate-limit.ts';
import { getOrganisation } from '../organisations/organisations.service.ts';
import { loginForm } from './auth.schemas.ts';
import { BAD_CREDENTIALS, login } from './auth.service.ts';
import { principalOf } from './auth.middleware.ts';

export function authRoutes(ctx: AppContext): Router {
  const r = Router();
  const c = ctx.config;
  const tokens = { secret: c.JWT_SECRET, issuer: c.JWT_ISSUER, ttlSeconds: c.JWT_TTL_SECONDS };
  // Failed attempts are counted per username and per client address; a success clears the username's count.
  const byUser = createLimiter(ctx.redis, { prefix: `${c.REDIS_PREFIX}:rl:login-user`, points: c.LOGIN_MAX_FAILURES, durationSeconds: c.LOGIN_LOCK_SECONDS });
  const byIp = createLimiter(ctx.redis, { prefix: `${c.REDIS_PREFIX}:rl:login-ip`, points: c.LOGIN_MAX_FAILURES * 5, durationSeconds: c.LOGIN_LOCK_SECONDS });

  r.post('/login', requireContentType('form'), express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 }), async (req, res) => {
    const form = parseInput(loginForm, req.body);
    const userKey = form.username.trim().toLowerCase();
    const ipKey = req.ip ?? 'unknown';
    const [u, i] = await Promise.all([byUser.get(userKey), byIp.get(ipKey)]);
    for (const state of [u, i]) {
      if (state && state.consumedPoints >= (state === u ? c.LOGIN_MAX_FAILURES : c.LOGIN_MAX_FAILURES * 5)) throw tooMany(state);
    }
    const result = await login(ctx.db, ctx.clock, tokens, form.username, form.password);
    if (!result) {
      try {
        await Promise.all([byUser.consume(userKey), byIp.consume(ipKey)]);
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) throw err;
      }
      ctx.metrics.logins.inc({ outcome: 'failure' });
      throw new AppError('unauthorized', BAD_CREDENTIALS, { headers: { 'WWW-Authenticate': 'Bearer' } });
    }
    await byUser.delete(userKey);
    ctx.metrics.logins.inc({ outcome: 'success' });
    res.setHeader('Cache-Control', 'no-store');
    res.json({ access_token: result.access_token, token_type: result.token_type, expires_in: result.expires_in });
  });

  const me = async (req: express.Request, res: express.Response) => {
    const p = principalOf(req);
    const org = p.orgId === null ? null : await getOrganisation(ctx.db, p.orgId);
    const admin = p.role === 'org_admin';
    res.json({
      id: p.userId,
      username: p.username,
      role: p.role,
      organisation: org && {
        id: org.id,
        org_number: org.id,
        name: org.name,
        subscription_active: org.subscription_active,
        ...(admin
          ? {
              tenancy: org.tenancy,
              affiliate: org.affiliate,
              units: org.units,
              reserved_units: org.reserved,
              lifetime_units: org.lifetime_units,
              unit_cost: org.unit_cost_kobo,
              min_topup_units: org.min_topup_units,
              loyalty_badge: org.loyalty_badge,
            }
          : {}),
      },
    });
  };
  r.get('/me', ctx.authenticate, ctx.rateLimit, me);
  r.get('/meorganisation', ctx.authenticate, ctx.rateLimit, me);
  return r;
}
