import express, { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { AppError } from '../../lib/errors.ts';
import { parseInput, requireContentType } from '../../lib/http.ts';
import { getOrganisation } from '../organisations/index.ts';
import { clientCredentials, grantType, loginForm } from './auth.schemas.ts';
import { BAD_CLIENT_CREDENTIALS, BAD_CREDENTIALS, login, loginClient } from './auth.service.ts';
import { principalOf } from './auth.middleware.ts';
import { clientAuthentication } from './client-authentication.ts';
import { clientAddress, guardedSignIn } from './sign-in-guard.ts';

export function authRoutes(ctx: AppContext): Router {
  const r = Router();
  const c = ctx.config;
  const tokens = { secret: c.JWT_SECRET, issuer: c.JWT_ISSUER, ttlSeconds: c.JWT_TTL_SECONDS };

  r.post('/login', requireContentType('form'), express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 }), async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    if (parseInput(grantType, req.body).grant_type === 'client_credentials') {
      const creds = parseInput(clientCredentials, clientAuthentication(req.get('authorization'), req.body));
      const issued = await loginClient(ctx.db, ctx.clock, tokens, creds.client_id, creds.client_secret);
      ctx.metrics.logins.inc({ outcome: issued ? 'success' : 'failure' });
      if (!issued) throw new AppError('unauthorized', BAD_CLIENT_CREDENTIALS, { headers: { 'WWW-Authenticate': 'Basic realm="idverify"' } });
      res.json(issued);
      return;
    }
    const form = parseInput(loginForm, req.body);
    // A failure point is taken before the password is checked and given back on success (sign-in-guard.ts).
    const result = await guardedSignIn(ctx, form.username, clientAddress(req), () => login(ctx.db, ctx.clock, tokens, form.username, form.password));
    if (!result) {
      ctx.metrics.logins.inc({ outcome: 'failure' });
      throw new AppError('unauthorized', BAD_CREDENTIALS, { headers: { 'WWW-Authenticate': 'Bearer' } });
    }
    ctx.metrics.logins.inc({ outcome: 'success' });
    const { userId: _userId, ...answer } = result;
    res.json(answer);
  });

  const me = async (req: express.Request, res: express.Response) => {
    const p = principalOf(req);
    const org = p.orgId === null ? null : await getOrganisation(ctx.db, p.orgId);
    const admin = p.role === 'org_admin';
    res.json({
      id: p.userId,
      username: p.clientId === null ? p.username : null,
      ...(p.clientId === null ? {} : { client_id: p.clientId, name: p.username }),
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
  // A first-login token may read who it is (and nothing else but changing the password or logging out).
  r.get('/me', ctx.authenticateDuringPasswordChange, ctx.rateLimit, me);
  r.get('/meorganisation', ctx.authenticateDuringPasswordChange, ctx.rateLimit, me);
  return r;
}
