import express, { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { describe } from '../../lib/errors.ts';
import { parseInput, requireContentType } from '../../lib/http.ts';
import { auditContext, recordAudit } from '../audit/index.ts';
import { clientAddress, principalOf } from '../auth/index.ts';
import { changePasswordBody, forgotPasswordBody, resetPasswordBody } from './accounts.schemas.ts';
import { RESET_REQUESTED, sendResetMail } from './forgot-password.ts';
import { changePassword, PASSWORD_CHANGED, resetPassword } from './passwords.service.ts';

/** Password change, first-login change, reset by e-mail and logout. */
export function accountsRoutes(ctx: AppContext): Router {
  const r = Router();
  const json = [requireContentType('json'), express.json({ limit: '8kb' })];
  // A first-login token may call these two, and GET /me; nothing else.
  const self = [ctx.authenticateDuringPasswordChange, ctx.rateLimit];

  r.post('/change-password', ...self, ...json, async (req, res) => {
    const body = parseInput(changePasswordBody, req.body);
    const p = principalOf(req);
    await changePassword({ db: ctx.db, clock: ctx.clock, signIn: ctx }, p, body, clientAddress(req));
    await recordAudit(ctx.db, { ...auditContext(p), action: 'account.password_changed', target: `user:${p.userId}` });
    res.json({ detail: PASSWORD_CHANGED });
  });

  r.post('/logout', ...self, async (req, res) => {
    const p = principalOf(req);
    await ctx.revocations.revoke(p.tokenId, p.tokenExpiresAt);
    await recordAudit(ctx.db, { ...auditContext(p), action: 'auth.logout', target: p.clientId === null ? `user:${p.userId}` : `client:${p.clientId}` });
    res.status(204).end();
  });

  r.post('/forgot-password', ...json, (req, res) => {
    const { username } = parseInput(forgotPasswordBody, req.body);
    res.status(202).json({ detail: RESET_REQUESTED });
    // After the answer has gone (or the caller has left): how long the lookup and the e-mail take tells nothing.
    res.once('close', () => {
      sendResetMail(ctx, username).catch((err: unknown) => ctx.logger.error({ err: describe(err) }, 'password reset e-mail not queued'));
    });
  });

  r.post('/reset-password', ...json, async (req, res) => {
    const body = parseInput(resetPasswordBody, req.body);
    await resetPassword(ctx, body);
    res.setHeader('Cache-Control', 'no-store');
    res.json({ detail: PASSWORD_CHANGED });
  });

  return r;
}
