import type { Request, RequestHandler } from 'express';
import { addressAllowed } from '../../lib/address-list.ts';
import passport from 'passport';
import { ExtractJwt, Strategy as JwtStrategy } from 'passport-jwt';
import type { DatabasePool, FragmentSqlToken } from 'slonik';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import type { Principal } from './auth.schemas.ts';
import { readWithPrincipal } from './along.ts';
import type { TokenClaims } from './auth.schemas.ts';
import { ALGORITHM, claimsOf, principalFromClaims, principalOfRow, type TokenSettings } from './auth.service.ts';
import { headerKid, jwtKeys } from './jwt-keys.ts';
import { checkScope } from './endpoint-scopes.ts';
import type { Count, Gate } from './gate.ts';
import type { Revocations } from './revocations.ts';
import { clientAddress } from './sign-in-guard.ts';
import { ADDRESS_NOT_ALLOWED } from '../organisations/index.ts';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
    /** authenticateClaims: the token's checked claims, its principal not read yet. */
    claims?: TokenClaims;
    /** The rate-limit counters the authentication's Redis round trip already took (see gate.ts). */
    counted?: { token: Count; org: Count | null };
  }
}

export type Authenticators = {
  /** Every protected route: refuses a token whose user must change their password or enrol in two-factor sign-in first (403). */
  authenticate: RequestHandler;
  /** The few routes a first-login token may call: GET /me, POST /change-password, POST /logout. */
  authenticateDuringPasswordChange: RequestHandler;
  /** Two-factor enrolment: admits an administrator whose organisation requires it and who has not enrolled yet. */
  authenticateForMfaEnrolment: RequestHandler;
  /**
   * A hot route's half of authentication: the token and the deny-list only. The route must then
   * call readAlong, which reads the principal in the same statement as the route's own row and
   * applies every check `authenticate` applies, before anything else is done.
   */
  authenticateClaims: RequestHandler;
  /** The route's one-row query (`alongside`, a named prepared statement) read together with the principal. */
  readAlong: (req: Request, name: string, alongside: FragmentSqlToken) => Promise<Record<string, unknown>>;
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
/**
 * The deny-list check of one request. With a gate it is the one Redis call that also takes the
 * request's rate-limit counts (left on the request for the rate-limit middleware); when that call
 * fails (Redis unreachable) the separate read decides, and the limits fall back as they always did.
 */
function revocationCheck(req: Request, revocations: Revocations, gate: Gate | null) {
  if (!gate) return revocations;
  return {
    isRevoked: async (jti: string, orgId: number | null) => {
      let r;
      try {
        r = await gate(jti, orgId);
      } catch {
        return revocations.isRevoked(jti);
      }
      if (r.revoked) return true;
      req.counted = { token: r.token, org: r.org };
      return false;
    },
  };
}

/** The 401 for a token passport-jwt or the principal check refused. */
function refusalError(req: Request, info: unknown): AppError {
  const header = req.get('authorization');
  const message = info instanceof Error ? 'Could not validate credentials' : (info as { message?: string } | undefined)?.message;
  const detail = !header ? 'Not authenticated' : message && !/No auth token/i.test(message) ? message : 'Could not validate credentials';
  // A refusal with a reason an integrator acts on (a suspended API client) carries its code.
  const code = info instanceof Error ? undefined : (info as { code?: string } | undefined)?.code;
  return new AppError('unauthorized', detail, { headers: { 'WWW-Authenticate': 'Bearer' }, ...(header && code ? { extra: { code } } : {}) });
}

type Allow = { passwordPending: boolean; mfaPending: boolean };
const EVERYTHING_DONE: Allow = { passwordPending: false, mfaPending: false };

/** What a valid principal may still be refused on this route: a pending step, a client's scope or address. */
function admissionError(req: Request, user: Principal, allow: Allow): AppError | null {
  if (user.mustChangePassword && !allow.passwordPending) return new AppError('forbidden', PASSWORD_CHANGE_REQUIRED);
  if (user.mfaEnrolmentRequired && !allow.mfaPending) return new AppError('forbidden', MFA_ENROLMENT_REQUIRED, { extra: { code: 'mfa_enrolment_required' } });
  return clientRefusal(req, user);
}

export function createAuthenticator(db: DatabasePool, clock: Clock, tokens: TokenSettings, revocations: Revocations, gate: Gate | null = null): Authenticators {
  const pp = new passport.Passport();
  const options = {
    jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
    // The key the token's `kid` names. A token without one predates key ids (issued under a
    // single JWT_SECRET, at most an hour before the upgrade): the signing key checks it. An
    // unknown kid (a removed secret) fails here, before any signature work.
    secretOrKeyProvider: (_req: Request, raw: string, done: (err: unknown, key?: string) => void) => {
      const keys = jwtKeys(tokens.secrets);
      const kid = headerKid(raw);
      const key = kid === undefined ? keys.signing.key : kid === null ? undefined : keys.byKid.get(kid);
      // A KeyObject, not the string (see jwt-keys.ts); the typings know only strings and buffers.
      if (key) done(null, key as unknown as string);
      else done(new Error('unknown key'), undefined);
    },
    algorithms: [ALGORITHM],
    issuer: tokens.issuer,
    // exp and nbf are checked against the injectable clock in claimsOf.
    ignoreExpiration: true,
    jsonWebTokenOptions: { ignoreNotBefore: true },
    passReqToCallback: true as const,
  };
  type Done = (err: unknown, user?: unknown, info?: unknown) => void;
  const settle = (done: Done) => (p: object) => ('error' in p ? done(null, false, { message: (p as { error: string }).error, code: (p as { code?: string }).code }) : done(null, p));
  pp.use(
    'jwt',
    new JwtStrategy(options, (req: Request, payload: unknown, done: Done) => {
      principalFromClaims(db, clock, revocationCheck(req, revocations, gate), payload, tokens.ttlSeconds).then(settle(done), (err) => done(err));
    }),
  );
  // The token alone, and the deny-list: the route reads the principal in its own statement (readAlong).
  pp.use(
    'jwt-claims',
    new JwtStrategy(options, (req: Request, payload: unknown, done: Done) => {
      const c = claimsOf(clock, payload, tokens.ttlSeconds);
      if ('error' in c) return settle(done)(c);
      revocationCheck(req, revocations, gate)
        .isRevoked(c.jti, c.org)
        .then((revoked) => (revoked ? settle(done)({ error: 'Could not validate credentials' }) : done(null, c)), (err) => done(err));
    }),
  );
  const handler = (allow: Allow): RequestHandler => (req, res, next) =>
    pp.authenticate('jwt', { session: false }, (err: unknown, user: Principal | false, info: unknown) => {
      if (err) return next(err);
      if (!user) return next(refusalError(req, info));
      const refused = admissionError(req, user, allow);
      if (refused) return next(refused);
      req.principal = user;
      next();
    })(req, res, next);
  return {
    authenticate: handler(EVERYTHING_DONE),
    authenticateDuringPasswordChange: handler({ passwordPending: true, mfaPending: true }),
    authenticateForMfaEnrolment: handler({ passwordPending: false, mfaPending: true }),
    authenticateClaims: (req, res, next) =>
      pp.authenticate('jwt-claims', { session: false }, (err: unknown, claims: TokenClaims | false, info: unknown) => {
        if (err) return next(err);
        if (!claims) return next(refusalError(req, info));
        req.claims = claims;
        next();
      })(req, res, next),
    readAlong: async (req, name, alongside) => {
      const c = req.claims;
      if (!c) throw new AppError('unauthorized', 'Not authenticated');
      const { row, principalRow } = await readWithPrincipal(db, c, name, alongside);
      const p = principalOfRow(clock, c, principalRow, false);
      if ('error' in p) throw refusalError(req, { message: p.error, code: p.code });
      const refused = admissionError(req, p, EVERYTHING_DONE);
      if (refused) throw refused;
      req.principal = p;
      return row;
    },
  };
}

export function principalOf(req: { principal?: Principal }): Principal {
  if (!req.principal) throw new AppError('unauthorized', 'Not authenticated');
  return req.principal;
}
