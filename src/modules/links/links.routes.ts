import express, { Router, type Request } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { AppError } from '../../lib/errors.ts';
import { parseInput, requireContentType } from '../../lib/http.ts';
import { cursorParam, limitParam } from '../../lib/pagination.ts';
import { auditContext, recordAudit } from '../audit/index.ts';
import { principalOf, requireOrgAdmin } from '../auth/index.ts';
import { createLinkBody, LINK_ID_RE } from './links.schemas.ts';
import * as links from './links.service.ts';

const listQuery = z.object({ limit: limitParam, cursor: cursorParam });

/**
 * The organisation's verification links: its administrators, and API clients of an administrator role
 * holding the `links` scope (auth/endpoint-scopes.ts). The person's page is page/page.routes.ts.
 */
export function linksRoutes(ctx: AppContext): Router {
  const r = Router();
  const auth = [ctx.authenticate, ctx.rateLimit];
  const linkId = (raw: unknown): string => {
    const id = String(raw);
    if (!LINK_ID_RE.test(id)) throw new AppError('not_found', links.LINK_NOT_FOUND);
    return id;
  };
  // As the top-up's callback: the configured public address, else the one this request came to.
  const base = (req: Request) => (ctx.config.PUBLIC_BASE_URL ? ctx.config.publicBaseUrl : `${req.protocol}://${req.get('host')}`);

  r.post('/verification-links', ...auth, requireContentType('json'), express.json({ limit: '8kb' }), async (req, res) => {
    const orgId = requireOrgAdmin(principalOf(req));
    const body = parseInput(createLinkBody, req.body);
    const made = await links.createLink(ctx, principalOf(req), orgId, body, base(req));
    // A link spends the organisation's units for whoever holds it: its making and end are on the trail.
    await recordAudit(ctx.db, {
      ...auditContext(principalOf(req)),
      action: 'verification_link.created',
      target: `verification_link:${made.id}`,
      details: { max_uses: made.max_uses, require_face: made.require_face, liveness: made.liveness, expires_at: made.expires_at },
    });
    // The URL carries the link's only secret.
    res.setHeader('Cache-Control', 'no-store');
    res.status(201).json(made);
  });

  r.get('/verification-links', ...auth, async (req, res) => {
    const orgId = requireOrgAdmin(principalOf(req));
    res.json(await links.listLinks(ctx, orgId, parseInput(listQuery, req.query)));
  });

  r.get('/verification-links/:id', ...auth, async (req, res) => {
    const orgId = requireOrgAdmin(principalOf(req));
    res.setHeader('Cache-Control', 'no-store');
    res.json(await links.getLink(ctx, orgId, linkId(req.params.id)));
  });

  r.post('/verification-links/:id/revoke', ...auth, async (req, res) => {
    const orgId = requireOrgAdmin(principalOf(req));
    const id = linkId(req.params.id);
    const revoked = await links.revokeLink(ctx, orgId, id);
    await recordAudit(ctx.db, { ...auditContext(principalOf(req)), action: 'verification_link.revoked', target: `verification_link:${id}` });
    res.json(revoked);
  });

  return r;
}
