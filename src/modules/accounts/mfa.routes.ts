import express, { Router } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { AppError } from '../../lib/errors.ts';
import { parseInput, requireContentType } from '../../lib/http.ts';
import { auditContext, recordAudit } from '../audit/index.ts';
import { clientAddress, principalOf, type Principal } from '../auth/index.ts';
import { confirmTotp, disableTotp, enrolTotp, type CodeSender } from '../mfa/index.ts';
import { disableMfaBody } from './accounts.schemas.ts';
import { proveCurrentPassword } from './passwords.service.ts';

export const codeBody = z.object({ code: z.string().min(1, 'code must not be empty').max(64, 'code is too long') });

function person(p: Principal): number {
  if (p.userId === null) throw new AppError('forbidden', 'API clients do not sign in with a second factor');
  return p.userId;
}

const sender = (p: Principal): CodeSender => ({ id: person(p), orgId: p.orgId });

/**
 * Two-factor sign-in for the signed-in user: enrol, confirm, turn off. Confirming and turning off
 * end every token of the user, the caller's included, as a password change does.
 */
export function mfaRoutes(ctx: AppContext): Router {
  const r = Router();
  const json = [requireContentType('json'), express.json({ limit: '8kb' })];
  // Enrolment is what an administrator whose organisation requires it may still do.
  const enrolling = [ctx.authenticateForMfaEnrolment, ctx.rateLimit];

  r.post('/me/mfa/totp', ...enrolling, async (req, res) => {
    const p = principalOf(req);
    const answer = await enrolTotp(ctx, { id: person(p), username: p.username });
    // A new secret is stored (not yet in use): a change to the user's credentials like any other.
    await recordAudit(ctx.db, { ...auditContext(p), action: 'mfa.enrolment_started', target: `user:${person(p)}` });
    res.setHeader('Cache-Control', 'no-store');
    res.status(201).json(answer);
  });

  r.post('/me/mfa/totp/confirm', ...enrolling, ...json, async (req, res) => {
    const p = principalOf(req);
    const { code } = parseInput(codeBody, req.body);
    const answer = await confirmTotp(ctx, sender(p), code);
    await recordAudit(ctx.db, { ...auditContext(p), action: 'mfa.enabled', target: `user:${person(p)}` });
    res.setHeader('Cache-Control', 'no-store');
    res.json(answer);
  });

  r.delete('/me/mfa/totp', ctx.authenticate, ctx.rateLimit, ...json, async (req, res) => {
    const p = principalOf(req);
    const body = parseInput(disableMfaBody, req.body);
    // The password first: a wrong one counts as a failed sign-in and costs no code.
    await proveCurrentPassword({ db: ctx.db, signIn: ctx }, p, body.current_password, clientAddress(req));
    await disableTotp(ctx, { ...sender(p), role: p.role }, body.code);
    await recordAudit(ctx.db, { ...auditContext(p), action: 'mfa.disabled', target: `user:${person(p)}` });
    res.status(204).end();
  });

  return r;
}
