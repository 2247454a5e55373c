import type { RequestHandler } from 'express';
import passport from 'passport';
import { ExtractJwt, Strategy as JwtStrategy } from 'passport-jwt';
import type { DatabasePool } from 'slonik';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import type { Principal } from './auth.schemas.ts';
import { ALGORITHM, principalFromClaims, signingKey, type TokenSettings } from './auth.service.ts';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}

/** One passport instance per app (no global state), with the algorithm pinned to HS256. */
export function createAuthenticator(db: DatabasePool, clock: Clock, tokens: TokenSettings): RequestHandler {
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
        principalFromClaims(db, clock, payload).then(
          (p) => ('error' in p ? done(null, false, { message: p.error }) : done(null, p)),
          (err) => done(err),
        );
      },
    ),
  );
  const handler = (req: Parameters<RequestHandler>[0], res: Parameters<RequestHandler>[1], next: Parameters<RequestHandler>[2]) =>
    pp.authenticate('jwt', { session: false }, (err: unknown, user: Principal | false, info: unknown) => {
      if (err) return next(err);
      if (!user) {
        const header = req.get('authorization');
        const message = info instanceof Error ? 'Could not validate credentials' : (info as { message?: string } | undefined)?.message;
        const detail = !header ? 'Not authenticated' : message && !/No auth token/i.test(message) ? message : 'Could not validate credentials';
        return next(new AppError('unauthorized', detail, { headers: { 'WWW-Authenticate': 'Bearer' } }));
      }
      req.principal = user;
      next();
    })(req, res, next);
  return handler;
}

export function principalOf(req: { principal?: Principal }): Principal {
  if (!req.principal) throw new AppError('unauthorized', 'Not authenticated');
  return req.principal;
}
