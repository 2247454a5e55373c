// The accounts module's door: passwords (change, first login, reset by e-mail), logout and API
// clients over HTTP. Tokens themselves are the auth module's; users and API clients are rows of
// the organisations module.
import { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { accountsRoutes as passwordRoutes } from './accounts.routes.ts';
import { apiClientsRoutes } from './api-clients.routes.ts';
import { mfaRoutes } from './mfa.routes.ts';

export { register as registerAccountsOpenApi } from './accounts.openapi.ts';
export { checkNewPassword } from './password-rules.ts';

export function accountsRoutes(ctx: AppContext): Router {
  return Router().use(passwordRoutes(ctx), apiClientsRoutes(ctx), mfaRoutes(ctx));
}
