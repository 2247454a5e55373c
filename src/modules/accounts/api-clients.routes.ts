import express, { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { AppError } from '../../lib/errors.ts';
import { parseInput, requireContentType } from '../../lib/http.ts';
import { principalOf, requirePersonOrgAdmin } from '../auth/index.ts';
import { createApiClient, listApiClients, retireApiClient } from '../organisations/index.ts';
import { CLIENT_ID_RE, createApiClientBody } from './accounts.schemas.ts';

/** Credentials for an organisation's servers, managed by its administrators (persons only). */
export function apiClientsRoutes(ctx: AppContext): Router {
  const r = Router();
  const auth = [ctx.authenticate, ctx.rateLimit];

  r.post('/api-clients', ...auth, requireContentType('json'), express.json({ limit: '8kb' }), async (req, res) => {
    const orgId = requirePersonOrgAdmin(principalOf(req));
    const body = parseInput(createApiClientBody, req.body);
    const c = await createApiClient(ctx.db, { orgId, name: body.name, role: body.role, createdBy: principalOf(req).userId });
    res.setHeader('Cache-Control', 'no-store');
    res.status(201).json({ client_id: c.client_id, client_secret: c.client_secret, name: c.name, role: c.role, created_at: c.created_at });
  });

  r.get('/api-clients', ...auth, async (req, res) => {
    const orgId = requirePersonOrgAdmin(principalOf(req));
    const rows = await listApiClients(ctx.db, orgId);
    res.json({ data: rows.map((c) => ({ client_id: c.client_id, name: c.name, role: c.role, created_at: c.created_at, last_used_at: c.last_used_at })) });
  });

  r.delete('/api-clients/:client_id', ...auth, async (req, res) => {
    const orgId = requirePersonOrgAdmin(principalOf(req));
    const clientId = String(req.params.client_id);
    if (!CLIENT_ID_RE.test(clientId)) throw new AppError('not_found', 'API client not found');
    await retireApiClient(ctx.db, orgId, clientId);
    res.status(204).end();
  });

  return r;
}
