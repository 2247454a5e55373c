import { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { parsePathParams } from '../../lib/http.ts';
import { principalOf, requireOrgMember } from '../auth/index.ts';
import { sessionPathParams } from './liveness.schemas.ts';
import { createSession, readSession, sessionNotFound } from './sessions.ts';

/** The liveness sessions: whoever may make a face match (`POST /verify-nin/face`) may make and read them. */
export function livenessRoutes(ctx: AppContext): Router {
  const r = Router();
  r.post('/liveness/sessions', ctx.authenticate, ctx.rateLimit, async (req, res) => {
    const orgId = requireOrgMember(principalOf(req));
    res.setHeader('Cache-Control', 'no-store');
    res.status(201).json(await createSession(ctx, orgId));
  });
  r.get('/liveness/sessions/:id', ctx.authenticate, ctx.rateLimit, async (req, res) => {
    const orgId = requireOrgMember(principalOf(req));
    // A malformed id cannot name a session: answered as one that does not exist.
    const { id } = parsePathParams(sessionPathParams, req.params, sessionNotFound());
    res.setHeader('Cache-Control', 'no-store');
    res.json(await readSession(ctx, orgId, id));
  });
  return r;
}
