import type { RequestHandler } from 'express';
import passport from 'passport';
import { ExtractJwt, Strategy as JwtStrategy } from 'passport-jwt';
import type { DatabasePool } from 'slonik';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import type { Principal } from './auth.schemas.ts';
import { ALGORITHM, principalFromClaims, signingKey, type TokenSettings } from './auth.service.ts';
import type { Revocations } from './revocations.ts';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}

export type Authenticators = {
  /** Every protected route: refuses a token whose user must change their password first (403). */
  authenticate: RequestHandler;
  /** The few routes a first-login token may call: GET /me, POST /change-password, POST /logout. */
  authenticateDuringPasswordChange: RequestHandler;
};

export const PASSWORD_CHANGE_REQUIRED = 'Password change required';

/** One passport instance per app (no global state), with the algorithm pinned to HS256. */
export function createAuthenticator(db: DatabasePool, clock: Clock, tokens: TokenSettings, revocations: Revocations): Authenticators {
  const pp = new passport.Passport();
  pp.use(
    'jwt',
    new JwtStrategy(
      {
        jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
        // A KeyObject, not the string: see signingKey.
        secretOrKey: signingKey(tokens.secret) as unknown as string,
        algorithms: [ALGORITHM],
        issuer: tokens.issuer,
        // exp and nbf are checked against the injectable clock in principalFromClaims.
        ignoreExpiration: true,
        jsonWebTokenOptions: { ignoreNotBefore: true },
      },
      (payload: unknown, done: (err: unknown, user?: unknown, info?: unknown) => void) => {
        principalFromClaims(db, clock, revocations, payload, tokens.ttlSeconds).then(
          (p) => ('error' in p ? done(null, false, { message: p.error }) : done(null, p)),
          (err) => done(err),
        );
      },
    ),
  );
  const handler = (allowPending: boolean): RequestHandler => (req, res, next) =>
    pp.authenticate('jwt', { session: false }, (err: unknown, user: Principal | false, info: unknown) => {
      if (err) return next(err);
      if (!user) {
        const header = req.get('authorization');
        const message = info instanceof Error ? 'Could not validate credentials' : (info as { message?: string } | undefined)?.message;
        const detail = !header ? 'Not authenticated' : message && !/No auth token/i.test(message) ? message : 'Could not validate credentials';
        return next(new AppError('unauthorized', detail, { headers: { 'WWW-Authenticate': 'Bearer' } }));
      }
      if (user.mustChangePassword && !allowPending) return next(new AppError('forbidden', PASSWORD_CHANGE_REQUIRED));
      req.principal = user;
      next();
    })(req, res, next);
  return { authenticate: handler(false), authenticateDuringPasswordChange: handler(true) };
}

export function principalOf(req: { principal?: Principal }): Principal {
  if (!req.principal) throw new AppError('unauthorized', 'Not authenticated');
  return req.principal;
}
