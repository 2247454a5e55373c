import type { Request, RequestHandler } from 'express';
import { addressAllowed } from '../../lib/address-list.ts';
import passport from 'passport';
import { ExtractJwt, Strategy as JwtStrategy } from 'passport-jwt';
import type { DatabasePool } from 'slonik';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import type { Principal } from './auth.schemas.ts';
import { ALGORITHM, principalFromClaims, type TokenSettings } from './auth.service.ts';
import { headerKid, jwtKeys } from './jwt-keys.ts';
import { checkScope } from './endpoint-scopes.ts';
import type { Revocations } from './revocations.ts';
import { clientAddress } from './sign-in-guard.ts';
import { ADDRESS_NOT_ALLOWED } from '../organisations/index.ts';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}

export type Authenticators = {
  /** Every protected route: refuses a token whose user must change their password or enrol in two-factor sign-in first (403). */
  authenticate: RequestHandler;
  /** The few routes a first-login token may call: GET /me, POST /change-password, POST /logout. */
  authenticateDuringPasswordChange: RequestHandler;
  /** Two-factor enrolment: admits an administrator whose organisation requires it and who has not enrolled yet. */
  authenticateForMfaEnrolment: RequestHandler;
};

export const PASSWORD_CHANGE_REQUIRED = 'Password change required';
export const MFA_ENROLMENT_REQUIRED = 'Your organisation requires two-factor sign-in: enrol with POST /me/mfa/totp first';

/** The API client's own limits on every request: the endpoint's scope and the caller's address. */
function clientRefusal(req: Request, p: Principal): AppError | null {
  if (p.clientId === null) return null;
  if (!addressAllowed(p.allowedIps, clientAddress(req))) return new AppError('forbidden', ADDRESS_NOT_ALLOWED, { extra: { code: 'address_not_allowed' } });
  const check = checkScope(req.method, typeof req.route?.path === 'string' ? req.route.path : undefined, p.scopes ?? []);
  if (check.ok) return null;
  if (check.scope === null) return new AppError('forbidden', 'API clients may not call this endpoint', { extra: { code: 'insufficient_scope' } });
  return new AppError('forbidden', `This API client lacks the scope ${check.scope}`, { extra: { code: 'insufficient_scope' } });
}

/** One passport instance per app (no global state), with the algorithm pinned to HS256. */
export function createAuthenticator(db: DatabasePool, clock: Clock, tokens: TokenSettings, revocations: Revocations): Authenticators {
  const pp = new passport.Passport();
  pp.use(
    'jwt',
    new JwtStrategy(
      {
        jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
        // The key the token's `kid` names. A token without one predates key ids (issued under a
        // single JWT_SECRET, at most an hour before the upgrade): the signing key checks it. An
        // unknown kid (a removed secret) fails here, before any signature work.
        secretOrKeyProvider: (_req, raw, done) => {
          const keys = jwtKeys(tokens.secrets);
          const kid = headerKid(raw);
          const key = kid === undefined ? keys.signing.key : kid === null ? undefined : keys.byKid.get(kid);
          // A KeyObject, not the string (see jwt-keys.ts); the typings know only strings and buffers.
          if (key) done(null, key as unknown as string);
          else done(new Error('unknown key'), undefined);
        },
        algorithms: [ALGORITHM],
        issuer: tokens.issuer,
        // exp and nbf are checked against the injectable clock in principalFromClaims.
        ignoreExpiration: true,
        jsonWebTokenOptions: { ignoreNotBefore: true },
      },
      (payload: unknown, done: (err: unknown, user?: unknown, info?: unknown) => void) => {
        principalFromClaims(db, clock, revocations, payload, tokens.ttlSeconds).then(
          (p) => ('error' in p ? done(null, false, { message: p.error, code: p.code }) : done(null, p)),
          (err) => done(err),
        );
      },
    ),
  );
  const handler = (allow: { passwordPending: boolean; mfaPending: boolean }): RequestHandler => (req, res, next) =>
    pp.authenticate('jwt', { session: false }, (err: unknown, user: Principal | false, info: unknown) => {
      if (err) return next(err);
      if (!user) {
        const header = req.get('authorization');
        const message = info instanceof Error ? 'Could not validate credentials' : (info as { message?: string } | undefined)?.message;
        const detail = !header ? 'Not authenticated' : message && !/No auth token/i.test(message) ? message : 'Could not validate credentials';
        // A refusal with a reason an integrator acts on (a suspended API client) carries its code.
        const code = info instanceof Error ? undefined : (info as { code?: string } | undefined)?.code;
        return next(new AppError('unauthorized', detail, { headers: { 'WWW-Authenticate': 'Bearer' }, ...(header && code ? { extra: { code } } : {}) }));
      }
      if (user.mustChangePassword && !allow.passwordPending) return next(new AppError('forbidden', PASSWORD_CHANGE_REQUIRED));
      if (user.mfaEnrolmentRequired && !allow.mfaPending) return next(new AppError('forbidden', MFA_ENROLMENT_REQUIRED, { extra: { code: 'mfa_enrolment_required' } }));
      const refused = clientRefusal(req, user);
      if (refused) return next(refused);
      req.principal = user;
      next();
    })(req, res, next);
  return {
    authenticate: handler({ passwordPending: false, mfaPending: false }),
    authenticateDuringPasswordChange: handler({ passwordPending: true, mfaPending: true }),
    authenticateForMfaEnrolment: handler({ passwordPending: false, mfaPending: true }),
  };
}

export function principalOf(req: { principal?: Principal }): Principal {
  if (!req.principal) throw new AppError('unauthorized', 'Not authenticated');
  return req.principal;
}
