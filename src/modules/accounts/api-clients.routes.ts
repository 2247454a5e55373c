import express, { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { AppError } from '../../lib/errors.ts';
import { parseInput, parsePathParams, requireContentType } from '../../lib/http.ts';
import { auditContext, recordAudit } from '../audit/index.ts';
import { allowFirst, principalOf, requirePersonOrgAdmin } from '../auth/index.ts';
import { adoptApiClient, createApiClient, effectiveScopes, listApiClients, retireApiClient, rotateApiClient, type ApiClientRow, type ListedApiClient } from '../organisations/index.ts';
import { apiClientPathParams, createApiClientBody } from './accounts.schemas.ts';

/** Scopes in effect (a client created before scopes existed: all its role allows), addresses, expiry. */
function limitsOf(c: ApiClientRow) {
  return { scopes: effectiveScopes(c), allowed_ips: c.allowed_ips ?? [], expires_at: c.expires_at };
}

function listed(c: ListedApiClient) {
  return {
    client_id: c.client_id,
    name: c.name,
    role: c.role,
    created_at: c.created_at,
    last_used_at: c.last_used_at,
    created_by: c.creator_id === null || c.creator_username === null ? null : { id: c.creator_id, username: c.creator_username },
    status: c.suspended ? ('suspended' as const) : ('active' as const),
    ...limitsOf(c),
  };
}

/** Credentials for an organisation's servers, managed by its administrators (persons only). */
export function apiClientsRoutes(ctx: AppContext): Router {
  const r = Router();
  const auth = [ctx.authenticate, ctx.rateLimit];

  r.post('/api-clients', ...auth, allowFirst(requirePersonOrgAdmin), requireContentType('json'), express.json({ limit: '8kb' }), async (req, res) => {
    const orgId = requirePersonOrgAdmin(principalOf(req));
    const body = parseInput(createApiClientBody, req.body);
    const c = await createApiClient(ctx.db, {
      orgId,
      name: body.name,
      role: body.role,
      createdBy: principalOf(req).userId,
      now: ctx.clock.now(),
      scopes: body.scopes,
      allowedIps: body.allowed_ips,
      allowAny: body.allow_any ?? false,
      expiresAt: body.expires_at,
    });
    await recordAudit(ctx.db, { ...auditContext(principalOf(req)), action: 'api_client.created', target: `client:${c.client_id}`, details: { role: c.role, scopes: c.scopes } });
    res.setHeader('Cache-Control', 'no-store');
    res.status(201).json({ client_id: c.client_id, client_secret: c.client_secret, name: c.name, role: c.role, created_at: c.created_at, ...limitsOf(c) });
  });

  r.get('/api-clients', ...auth, async (req, res) => {
    const orgId = requirePersonOrgAdmin(principalOf(req));
    res.json({ data: (await listApiClients(ctx.db, orgId)).map(listed) });
  });

  // Another administrator takes over a client whose creator was disabled or demoted (or any client
  // of the organisation): it acts for them from now on and signs in again with its secret.
  r.post('/api-clients/:client_id/adopt', ...auth, async (req, res) => {
    const p = principalOf(req);
    const orgId = requirePersonOrgAdmin(p);
    const { client_id: clientId } = parsePathParams(apiClientPathParams, req.params, new AppError('not_found', 'API client not found'));
    const adopted = await adoptApiClient(ctx.db, orgId, clientId, p.userId!);
    await recordAudit(ctx.db, { ...auditContext(p), action: 'api_client.adopted', target: `client:${clientId}` });
    res.json(listed(adopted));
  });

  // A new secret, shown once in this answer; the old secret and every token issued under it stop at once.
  r.post('/api-clients/:client_id/rotate', ...auth, async (req, res) => {
    const orgId = requirePersonOrgAdmin(principalOf(req));
    const { client_id: clientId } = parsePathParams(apiClientPathParams, req.params, new AppError('not_found', 'API client not found'));
    const rotated = await rotateApiClient(ctx.db, orgId, clientId);
    await recordAudit(ctx.db, { ...auditContext(principalOf(req)), action: 'api_client.rotated', target: `client:${clientId}` });
    res.setHeader('Cache-Control', 'no-store');
    res.json({ ...listed(rotated), client_secret: rotated.client_secret });
  });

  r.delete('/api-clients/:client_id', ...auth, async (req, res) => {
    const orgId = requirePersonOrgAdmin(principalOf(req));
    const { client_id: clientId } = parsePathParams(apiClientPathParams, req.params, new AppError('not_found', 'API client not found'));
    await retireApiClient(ctx.db, orgId, clientId);
    await recordAudit(ctx.db, { ...auditContext(principalOf(req)), action: 'api_client.revoked', target: `client:${clientId}` });
    res.status(204).end();
  });

  return r;
}
