import express, { Router } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { AppError } from '../../lib/errors.ts';
import { parseInput, parsePathParams, requireContentType, serialIdParam } from '../../lib/http.ts';
import { auditContext, recordAudit } from '../audit/index.ts';
import { allowFirst, principalOf } from '../auth/index.ts';
import { acceptInvitation, inviteTeamMember, listTeamInvitations, previewInvitation, revokeTeamInvitation } from './invitations.ts';
import { acceptInvitationBody, newInvitation, previewInvitationBody, TEAM_BY_INVITATION, teamMemberChange } from './team.schemas.ts';
import { changeTeamMember, listTeam, requireTeamManager } from './team.service.ts';

export function teamRoutes(ctx: AppContext): Router {
  const r = Router();
  const json = [requireContentType('json'), express.json({ limit: '8kb' })];
  const guard = [ctx.authenticate, ctx.rateLimit];

  r.get('/team', ...guard, async (req, res) => {
    res.json({ data: await listTeam(ctx.db, principalOf(req)) });
  });

  // Users are added by invitation (issue 34): no password is ever shown to anyone but its owner. A
  // temporary password is the operator CLI's user:create path only; the old call answers 410, saying where to go.
  r.post('/team', ...guard, () => {
    throw new AppError('gone', TEAM_BY_INVITATION);
  });

  r.patch('/team/:id', ...guard, allowFirst(requireTeamManager), ...json, async (req, res) => {
    const p = principalOf(req);
    const change = parseInput(teamMemberChange, req.body);
    const { id } = parsePathParams(z.object({ id: serialIdParam }), req.params, new AppError('not_found', 'User not found'));
    const changed = await changeTeamMember(ctx.db, p, Number(id), change);
    // The fields asked for and where they ended: a role and a flag, nothing personal.
    await recordAudit(ctx.db, { ...auditContext(p), action: 'team.user_updated', target: `user:${changed.id}`, details: { changed: Object.keys(change).sort(), role: changed.role, disabled: changed.disabled } });
    res.json(changed);
  });

  r.post('/team/invitations', ...guard, allowFirst(requireTeamManager), ...json, async (req, res) => {
    res.status(201).json(await inviteTeamMember(ctx, principalOf(req), parseInput(newInvitation, req.body)));
  });
  r.get('/team/invitations', ...guard, async (req, res) => {
    res.json({ data: await listTeamInvitations(ctx, principalOf(req)) });
  });
  r.delete('/team/invitations/:id', ...guard, async (req, res) => {
    const { id } = parsePathParams(z.object({ id: serialIdParam }), req.params, new AppError('not_found', 'Open invitation not found'));
    res.json(await revokeTeamInvitation(ctx, principalOf(req), Number(id)));
  });
  // No bearer token: the invitation's own proves the caller. A POST, so that the token stays out of
  // every URL (access logs, proxies), as it stays in the link's fragment.
  r.post('/invitations/preview', ...json, async (req, res) => {
    const seen = await previewInvitation(ctx, parseInput(previewInvitationBody, req.body).token);
    res.setHeader('Cache-Control', 'no-store');
    res.json(seen);
  });
  // No token: the invitation's own proves the caller. It answers as a new user's sign-up would.
  r.post('/invitations/accept', ...json, async (req, res) => {
    const made = await acceptInvitation(ctx, parseInput(acceptInvitationBody, req.body));
    res.setHeader('Cache-Control', 'no-store');
    res.status(201).json(made);
  });
  return r;
}
