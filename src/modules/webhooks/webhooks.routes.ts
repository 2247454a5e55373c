import express, { Router } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { AppError } from '../../lib/errors.ts';
import { parseInput, requireContentType } from '../../lib/http.ts';
import { cursorParam, limitParam } from '../../lib/pagination.ts';
import { auditContext, recordAudit } from '../audit/index.ts';
import { principalOf, requireOrgAdmin } from '../auth/index.ts';
import * as endpoints from './endpoints.ts';
import { createEndpointBody, DELIVERY_ID_RE, ENDPOINT_ID_RE, patchEndpointBody } from './webhooks.schemas.ts';

const listQuery = z.object({ limit: limitParam, cursor: cursorParam });

/**
 * The organisation's webhook endpoints: its administrators, and API clients of an administrator role
 * holding the `webhooks` scope (auth/endpoint-scopes.ts). The processor's inbound webhook is topup's.
 */
export function webhooksRoutes(ctx: AppContext): Router {
  const r = Router();
  const auth = [ctx.authenticate, ctx.rateLimit];
  const json = [requireContentType('json'), express.json({ limit: '8kb' })];
  const endpointId = (raw: unknown): string => {
    const id = String(raw);
    if (!ENDPOINT_ID_RE.test(id)) throw new AppError('not_found', 'webhook endpoint not found');
    return id;
  };

  r.post('/webhook-endpoints', ...auth, ...json, async (req, res) => {
    const orgId = requireOrgAdmin(principalOf(req));
    const body = parseInput(createEndpointBody, req.body);
    const made = await endpoints.createEndpoint(ctx, orgId, body, req.socket.localPort);
    // A signing secret is a credential: its making, change, rotation and end are on the trail.
    await recordAudit(ctx.db, { ...auditContext(principalOf(req)), action: 'webhook_endpoint.created', target: `webhook_endpoint:${made.id}`, details: { events: made.events } });
    res.setHeader('Cache-Control', 'no-store');
    res.status(201).json(made);
  });

  r.get('/webhook-endpoints', ...auth, async (req, res) => {
    res.json(await endpoints.listEndpoints(ctx, requireOrgAdmin(principalOf(req))));
  });

  r.get('/webhook-endpoints/:id', ...auth, async (req, res) => {
    res.json(await endpoints.getEndpoint(ctx, requireOrgAdmin(principalOf(req)), endpointId(req.params.id)));
  });

  r.patch('/webhook-endpoints/:id', ...auth, ...json, async (req, res) => {
    const orgId = requireOrgAdmin(principalOf(req));
    const id = endpointId(req.params.id);
    const patch = parseInput(patchEndpointBody, req.body);
    const updated = await endpoints.updateEndpoint(ctx, orgId, id, patch, req.socket.localPort);
    await recordAudit(ctx.db, { ...auditContext(principalOf(req)), action: 'webhook_endpoint.updated', target: `webhook_endpoint:${id}`, details: { changed: Object.keys(patch).filter((k) => (patch as Record<string, unknown>)[k] !== undefined) } });
    res.json(updated);
  });

  r.delete('/webhook-endpoints/:id', ...auth, async (req, res) => {
    const id = endpointId(req.params.id);
    await endpoints.deleteEndpoint(ctx, requireOrgAdmin(principalOf(req)), id);
    await recordAudit(ctx.db, { ...auditContext(principalOf(req)), action: 'webhook_endpoint.deleted', target: `webhook_endpoint:${id}` });
    res.status(204).end();
  });

  r.post('/webhook-endpoints/:id/rotate-secret', ...auth, async (req, res) => {
    const orgId = requireOrgAdmin(principalOf(req));
    const id = endpointId(req.params.id);
    const rotated = await endpoints.rotateSecret(ctx, orgId, id, ctx.clock.now());
    await recordAudit(ctx.db, { ...auditContext(principalOf(req)), action: 'webhook_endpoint.secret_rotated', target: `webhook_endpoint:${id}` });
    res.setHeader('Cache-Control', 'no-store');
    res.json(rotated);
  });

  r.post('/webhook-endpoints/:id/test', ...auth, async (req, res) => {
    const orgId = requireOrgAdmin(principalOf(req));
    const id = endpointId(req.params.id);
    // Pings and redeliveries make us send to a receiver on the caller's word: who asked is on the
    // trail, recorded in the transaction that queues the delivery.
    const sent = await endpoints.sendTestEvent(ctx, orgId, id, auditContext(principalOf(req)));
    res.status(202).json(sent);
  });

  r.get('/webhook-endpoints/:id/deliveries', ...auth, async (req, res) => {
    const orgId = requireOrgAdmin(principalOf(req));
    const q = parseInput(listQuery, req.query);
    res.json(await endpoints.listDeliveries(ctx, orgId, endpointId(req.params.id), q));
  });

  r.post('/webhook-endpoints/deliveries/:delivery_id/redeliver', ...auth, async (req, res) => {
    const orgId = requireOrgAdmin(principalOf(req));
    const id = String(req.params.delivery_id);
    if (!DELIVERY_ID_RE.test(id)) throw new AppError('not_found', 'delivery not found');
    const { delivery } = await endpoints.redeliver(ctx, orgId, id, auditContext(principalOf(req)));
    res.status(202).json(delivery);
  });

  return r;
}
