import express, { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { mfaIsOn } from '../mfa/index.ts';
import { getOrganisation } from '../organisations/index.ts';
import { roles } from '../../lib/roles.ts';
import { principalOf } from './auth.middleware.ts';
import { tokenRoutes } from './token.routes.ts';

export function authRoutes(ctx: AppContext): Router {
  const r = Router();
  const c = ctx.config;
  const tokens = { secrets: c.jwtSecrets, issuer: c.JWT_ISSUER, ttlSeconds: c.JWT_TTL_SECONDS };

  tokenRoutes(ctx, r, tokens);

  const me = async (req: express.Request, res: express.Response) => {
    const p = principalOf(req);
    const [org, mfa] = await Promise.all([
      p.orgId === null ? null : getOrganisation(ctx.db, p.orgId),
      // A person's own two-factor state, so the portal's Account page says "on" instead of offering a set-up.
      p.clientId === null && p.userId !== null ? mfaIsOn(ctx.db, p.userId) : null,
    ]);
    // Every member sees the balance; the price and the rest of the wallet, those who keep the accounts.
    const accounts = roles.may(p.role, 'keep_accounts');
    res.json({
      id: p.userId,
      username: p.clientId === null ? p.username : null,
      ...(p.clientId === null ? {} : { client_id: p.clientId, name: p.username }),
      role: p.role,
      ...(mfa === null ? {} : { mfa_enabled: mfa }),
      organisation: org && {
        id: org.id,
        org_number: org.id,
        name: org.name,
        subscription_active: org.subscription_active,
        units: org.units,
        ...(accounts
          ? {
              tenancy: org.tenancy,
              affiliate: org.affiliate,
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
