import express, { type Router } from 'express';
import type { AppContext } from '../../context.ts';
import { AppError } from '../../lib/errors.ts';
import { requireContentType } from '../../lib/http.ts';
import { checkClientCredentials } from '../organisations/index.ts';
import { API_CLIENT_SUSPENDED, API_CLIENT_SUSPENDED_CODE, BAD_CLIENT_CREDENTIALS, BAD_CREDENTIALS, login, loginClient, requestedScopes, type TokenSettings } from './auth.service.ts';
import { clientAuthentication, invalidClient } from './client-authentication.ts';
import { clientAddress, guardedSignIn } from './sign-in-guard.ts';
import { auditFailedSignIn, auditSignIn } from './sign-in-audit.ts';
import { oauthError, tokenEndpointErrors } from './token-errors.ts';
import { checkSignInCode, INVALID_CODE } from '../mfa/index.ts';

export const OTP_REQUIRED = 'A one-time code is required';

const invalidRequest = (detail: string) => oauthError('bad_request', 'invalid_request', detail);

/** The service's own `code` beside the OAuth `error` (mfa_required, mfa_invalid, api_client_suspended). */
function withCode(e: AppError, code: string): AppError {
  return new AppError(e.code, e.detail, { extra: { ...e.extra, code }, ...(e.headers ? { headers: e.headers } : {}) });
}

/** The right credentials of a client whose creator may no longer create it: refused, with the service's own code. */
function suspendedClient() {
  const e = invalidClient(API_CLIENT_SUSPENDED);
  return new AppError(e.code, e.detail, { extra: { ...e.extra, code: API_CLIENT_SUSPENDED_CODE }, ...(e.headers ? { headers: e.headers } : {}) });
}

// C0 control characters but tab: PostgreSQL refuses NUL deep inside a query, and none of them has
// any business in a name, a password or a client credential.
const C0_BUT_TAB = /[\u0000-\u0008\u000a-\u001f]/;

/**
 * The form's parameters, each sent once (RFC 6749 section 3.2: parameters must not repeat), none
 * holding a control character (refused before any query runs).
 */
function singleValued(body: unknown): Record<string, string> {
  const form: Record<string, string> = {};
  for (const [k, v] of Object.entries((body ?? {}) as Record<string, unknown>)) {
    if (C0_BUT_TAB.test(k)) throw invalidRequest('body: must not contain control characters');
    if (typeof v !== 'string') throw invalidRequest(`Parameter sent more than once: ${k.slice(0, 40)}`);
    if (C0_BUT_TAB.test(v)) throw invalidRequest(`${k.slice(0, 40)}: must not contain control characters`);
    form[k] = v;
  }
  return form;
}

function required(form: Record<string, string>, field: string, max: number): string {
  const v = form[field];
  if (v === undefined) throw invalidRequest(`Field required: ${field}`);
  if (v === '') throw invalidRequest(`${field}: ${field} must not be empty`);
  if (v.length > max) throw invalidRequest(`${field}: ${field} must be at most ${max} characters`);
  return v;
}

/**
 * POST /login, the OAuth 2.0 token endpoint: the password grant (the default) and the client
 * credentials grant. Client credentials, when a request carries them, are checked whatever the
 * grant (RFC 6749 section 3.2.1), before the password is.
 */
export function tokenRoutes(ctx: AppContext, r: Router, tokens: TokenSettings): void {
  const parseForm = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 });
  r.post('/login', requireContentType('form'), parseForm, async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const form = singleValued(req.body);
    const grant = form.grant_type ?? 'password';
    if (grant !== 'password' && grant !== 'client_credentials') {
      throw oauthError('bad_request', 'unsupported_grant_type', 'grant_type must be "password" or "client_credentials"');
    }
    const scope = requestedScopes(form.scope);
    const client = clientAuthentication(req.get('authorization'), form);

    if (grant === 'client_credentials') {
      if (!client) throw invalidRequest('Field required: client_id');
      const issued = await loginClient(ctx.db, ctx.clock, tokens, client.clientId, client.clientSecret, clientAddress(req), scope);
      ctx.metrics.logins.inc({ outcome: issued && !('suspended' in issued) ? 'success' : 'failure' });
      if (!issued || 'suspended' in issued) {
        await auditFailedSignIn(ctx.db, { clientId: client.clientId });
        throw issued ? suspendedClient() : invalidClient(BAD_CLIENT_CREDENTIALS);
      }
      const { clientId, orgId, ...granted } = issued;
      await auditSignIn(ctx.db, { clientId, orgId });
      res.json(granted);
      return;
    }

    const username = required(form, 'username', 254);
    const password = required(form, 'password', 1024);
    const caller = client ? await checkClientCredentials(ctx.db, client.clientId, client.clientSecret, { address: clientAddress(req), now: ctx.clock.now() }) : null;
    if (client && (!caller || caller.suspended)) {
      ctx.metrics.logins.inc({ outcome: 'failure' });
      throw caller ? suspendedClient() : invalidClient(BAD_CLIENT_CREDENTIALS);
    }
    const otp = form.otp;
    if (otp !== undefined && otp.length > 64) throw invalidRequest('otp: otp is too long');
    // Why a proven password was still refused: no one-time code, or a wrong one.
    let refusal: AppError | null = null;
    // A code counts towards the user's failures (429 past the count) besides this guard's counts.
    const secondFactor = async (user: { id: number; orgId: number | null }) => {
      const outcome = await checkSignInCode(ctx, user, otp);
      if (outcome === 'missing') refusal = withCode(oauthError('unauthorized', 'invalid_grant', OTP_REQUIRED), 'mfa_required');
      if (outcome === 'wrong') refusal = withCode(oauthError('unauthorized', 'invalid_grant', INVALID_CODE), 'mfa_invalid');
      return outcome === 'recovery' ? ('sessions_ended' as const) : outcome === 'off' || outcome === 'ok';
    };
    // A failure point is taken before the password is checked and given back only when the sign-in
    // fully succeeds, second factor included (sign-in-guard.ts).
    const result = await guardedSignIn(ctx, username, clientAddress(req), () => login(ctx.db, ctx.clock, tokens, username, password, secondFactor, scope));
    if (!result) {
      ctx.metrics.logins.inc({ outcome: 'failure' });
      await auditFailedSignIn(ctx.db, { username });
      throw refusal ?? oauthError('unauthorized', 'invalid_grant', BAD_CREDENTIALS, { 'WWW-Authenticate': 'Bearer' });
    }
    // An organisation's API client signs in its own organisation's people only.
    if (caller && caller.org_id !== result.orgId) {
      ctx.metrics.logins.inc({ outcome: 'failure' });
      throw oauthError('bad_request', 'unauthorized_client', 'This API client may not sign in users of another organisation');
    }
    ctx.metrics.logins.inc({ outcome: 'success' });
    const { userId, orgId, ...answer } = result;
    await auditSignIn(ctx.db, { userId, orgId });
    res.json(answer);
  });
  r.use('/login', tokenEndpointErrors);
}
