import type { Request, RequestHandler } from 'express';
import { addressAllowed } from '../../lib/address-list.ts';
import { CAPABILITY_REFUSALS, roles } from '../../lib/roles.ts';
import passport from 'passport';
import { ExtractJwt, Strategy as JwtStrategy } from 'passport-jwt';
import type { DatabasePool } from 'slonik';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import type { Principal } from './auth.schemas.ts';
import { alongReader, type AlongRead, type AlongRecording, type Alongside } from './along.ts';
import { auditContext, canonicalOf, type AuditAction } from '../audit/index.ts';
import type { TokenClaims } from './auth.schemas.ts';
import { ALGORITHM, claimsOf, principalFromClaims, principalOfRow, scopeHolder, subjectOf, type TokenSettings } from './auth.service.ts';
import { headerKid, jwtKeys } from './jwt-keys.ts';
import { checkScope, type ScopeCheck } from './endpoint-scopes.ts';
import { failing } from '../../lib/rule.ts';
import { ADMISSION, type AdmissionCheck } from './admission.ts';
import type { Counted, Gate, GateResult, GiveBack } from './gate.ts';
import type { Revocations } from './revocations.ts';
import { tokenMemo } from './token-memo.ts';
import { clientAddress } from './sign-in-guard.ts';
import { ADDRESS_NOT_ALLOWED } from '../organisations/index.ts';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
    /** authenticateClaims: the token's checked claims, its principal not read yet. */
    claims?: TokenClaims;
    /** The rate-limit counters the authentication's Redis round trip already took (see gate.ts). */
    counted?: Counted;
    /** countBeforeRead took the deny-list and the counts before the route's read (they are given back if it refuses). */
    countedBeforeRead?: boolean;
  }
}

export type Authenticators = {
  /** Every protected route: refuses a token whose user must change their password or enrol in two-factor sign-in first (403). */
  authenticate: RequestHandler;
  /** The few routes a first-login token may call: GET /me, POST /change-password, POST /logout. */
  authenticateDuringPasswordChange: RequestHandler;
  /** Two-factor enrolment: admits an administrator whose organisation requires it and who has not enrolled yet. */
  authenticateForMfaEnrolment: RequestHandler;
  /** As authenticate, for a route outside the rate limits (the queue board): its requests count against none. */
  authenticateUnlimited: RequestHandler;
  /**
   * A hot route's first half of authentication: the token's signature and claims only. The route
   * must then call a reader made by alongReader, which reads the principal in the same statement as
   * the route's own row, applies every check `authenticate` applies and asks the deny-list, before
   * anything else is done.
   */
  authenticateClaims: RequestHandler;
  /**
   * A hot route's deny-list and rate-limit counts taken before its read, in one Redis call (401 for a
   * logged-out token): true when taken (req.counted holds the counts for the rate-limit check, the
   * reader then admits without asking again and gives the counts back if it refuses the principal);
   * false when the route keeps the usual order (a Redis Cluster, or that call failed).
   */
  countBeforeRead: (req: Request) => Promise<boolean>;
  /** Gives back the counts countBeforeRead took (the request then goes the usual way, or is refused). */
  giveBackCounts: (req: Request) => Promise<void>;
  /**
   * A reader of the route's one-row query (`alongside`, by the request's key) together with the
   * principal; made once per route. With `recording`, and `record` given to a reading counted before
   * its read, the statement also appends the read's audit event when it serves the row (`recorded`).
   */
  alongReader: (
    name: string,
    alongside: Alongside,
    recording?: AlongRecording | null,
  ) => (req: Request, key: string, record?: AlongRecord | null) => Promise<{ row: Record<string, unknown>; recorded: boolean; at: Date | null }>;
};

/** The audit event a hot route's read records (the actor, organisation and origin come from the request). */
export type AlongRecord = { action: AuditAction; target: string };

export const PASSWORD_CHANGE_REQUIRED = 'Password change required';
export const MFA_ENROLMENT_REQUIRED = 'Your organisation requires two-factor sign-in: enrol with POST /me/mfa/totp first';

/** The 403 for each check of ADMISSION (admission.ts) a principal fails. */
function admissionRefusal(refused: AdmissionCheck, client: boolean, check: ScopeCheck, person: boolean): AppError {
  switch (refused) {
    case 'password_change':
      return new AppError('forbidden', PASSWORD_CHANGE_REQUIRED);
    case 'mfa_enrolment':
      return new AppError('forbidden', MFA_ENROLMENT_REQUIRED, { extra: { code: 'mfa_enrolment_required' } });
    case 'address':
      return new AppError('forbidden', ADDRESS_NOT_ALLOWED, { extra: { code: 'address_not_allowed' } });
    case 'scope': {
      const scope = check.ok ? null : check.scope;
      // A person's token as issued, refused a scope that only the holders of one capability have (a
      // member at the top-up endpoints): the answer the route's own guard gives.
      const behind = person && scope !== null ? roles.capabilityBehind(scope) : null;
      if (behind !== null) return new AppError('forbidden', CAPABILITY_REFUSALS[behind]);
      if (scope === null) return new AppError('forbidden', client ? 'API clients may not call this endpoint' : 'A token narrowed by scope may not call this endpoint', { extra: { code: 'insufficient_scope' } });
      return new AppError('forbidden', `${client ? 'This API client' : 'This token'} lacks the scope ${scope}`, { extra: { code: 'insufficient_scope' } });
    }
  }
}

const routeOf = (req: Request) => (typeof req.route?.path === 'string' ? req.route.path : undefined);

/**
 * The deny-list, once the principal is admitted; with `count`, the same Redis call takes the
 * request's rate-limit counts (left on the request for the rate-limit check). Without a gate (a
 * cluster), or when its call fails, the separate read decides and the limits count on their own.
 */
async function denyListed(req: Request, p: Principal, revocations: Revocations, gate: Gate | null, count: boolean, onGateError: (err: unknown) => void): Promise<boolean> {
  if (gate) {
    try {
      const r = await gate(p.tokenId, p.orgId, count);
      if (r.revoked) return true;
      if (r.counted) req.counted = r.counted;
      return false;
    } catch (err) {
      onGateError(err);
    }
  }
  return revocations.isRevoked(p.tokenId);
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

export type Allow = { passwordPending: boolean; mfaPending: boolean };
export const EVERYTHING_DONE: Allow = { passwordPending: false, mfaPending: false };

/**
 * What a valid principal may still be refused on this route: a pending step, an API client's address,
 * the endpoint's scope (a client's, or a narrowed person's token). The rule is ADMISSION (admission.ts),
 * which the requery's statement carries too.
 */
export function admissionError(req: Request, user: Principal, allow: Allow): AppError | null {
  const client = user.clientId !== null;
  const check = checkScope(req.method, routeOf(req), { client, scopes: user.scopes, role: user.role });
  const refused = failing(ADMISSION, {
    password_pending: allow.passwordPending,
    mfa_pending: allow.mfaPending,
    must_change_password: user.mustChangePassword,
    mfa_enrolment_required: user.mfaEnrolmentRequired,
    client_id: user.clientId,
    allowed_ips: user.allowedIps,
    address_allowed: client && addressAllowed(user.allowedIps, clientAddress(req)),
    may: check.ok,
  });
  return refused === null ? null : admissionRefusal(refused, client, check, !client && user.scopes === null);
}

const DENIED = { message: 'Could not validate credentials' };

/**
 * One passport instance per app (no global state), with the algorithm pinned to HS256.
 * `onGateError`: the one-call deny-list and counters failed and the separate calls stood in.
 */
export function createAuthenticator(
  db: DatabasePool,
  clock: Clock,
  tokens: TokenSettings,
  revocations: Revocations,
  gate: Gate | null = null,
  onGateError: (err: unknown) => void = () => undefined,
  giveBack: GiveBack | null = null,
): Authenticators {
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
  };
  type Done = (err: unknown, user?: unknown, info?: unknown) => void;
  const settle = (done: Done) => (p: object) => ('error' in p ? done(null, false, { message: (p as { error: string }).error, code: (p as { code?: string }).code }) : done(null, p));
  // The token and its user (or API client), read on every request.
  // The principals of the requests that arrive together are read by one statement (auth/along.ts).
  const readPrincipal = alongReader(db, 'principal', null);
  const principalOfClaims = async (c: TokenClaims) => (await readPrincipal({ c, key: '' })).principalRow;
  // A token jsonwebtoken accepted once is not verified again (token-memo.ts): its payload is
  // remembered here, after passport-jwt's checks, and the handlers below skip passport for it.
  const memo = tokenMemo({ max: 10_000, ttlSeconds: tokens.ttlSeconds });
  const bearer = ExtractJwt.fromAuthHeaderAsBearerToken();
  const withReq = { ...options, passReqToCallback: true as const };
  const principalOfPayload = (payload: unknown, done: Done) => void principalFromClaims(clock, payload, tokens.ttlSeconds, principalOfClaims).then(settle(done), (err) => done(err));
  const claimsOfPayload = (payload: unknown, done: Done) => settle(done)(claimsOf(clock, payload, tokens.ttlSeconds));
  // Remembered only when its claims hold too (a token refused for them is verified again each time).
  const remember = (req: Request, payload: unknown) => {
    if (!('error' in claimsOf(clock, payload, tokens.ttlSeconds))) memo.remember(bearer(req), payload);
  };
  pp.use('jwt', new JwtStrategy(withReq, (req: Request, payload: unknown, done: Done) => {
    remember(req, payload);
    principalOfPayload(payload, done);
  }));
  // The token alone: the route reads the principal in its own statement (alongReader).
  pp.use('jwt-claims', new JwtStrategy(withReq, (req: Request, payload: unknown, done: Done) => {
    remember(req, payload);
    claimsOfPayload(payload, done);
  }));
  /** passport-jwt's verdict on the request's token, or the one remembered for the same token. */
  const verified = (strategy: 'jwt' | 'jwt-claims', then: Done): RequestHandler => (req, res, next) => {
    const known = memo.get(bearer(req));
    if (!known) return void pp.authenticate(strategy, { session: false }, then)(req, res, next);
    if (strategy === 'jwt') principalOfPayload(known, then);
    else claimsOfPayload(known, then);
  };

  /** The counts countBeforeRead took, given back (best effort) and forgotten; nothing when it took none. */
  const giveBackCounts = async (req: Request): Promise<void> => {
    const c = req.claims;
    const early = req.countedBeforeRead === true;
    const counted = req.counted;
    req.countedBeforeRead = undefined;
    req.counted = undefined;
    if (!c || !early || !counted || !giveBack) return;
    await giveBack(c.jti, c.org, counted).catch(onGateError);
  };

  /** After the principal is admitted: the deny-list (and the counts), then the principal is the request's. */
  const admit = async (req: Request, p: Principal, count: boolean): Promise<AppError | null> => {
    if (await denyListed(req, p, revocations, gate, count, onGateError)) return refusalError(req, DENIED);
    req.principal = p;
    return null;
  };
  const handler = (allow: Allow, count = true): RequestHandler => (req, res, next) =>
    verified('jwt', (err: unknown, user?: unknown, info?: unknown) => {
      if (err) return next(err);
      if (!user) return next(refusalError(req, info));
      const refused = admissionError(req, user as Principal, allow);
      if (refused) return next(refused);
      admit(req, user as Principal, count).then((denied) => next(denied ?? undefined), next);
    })(req, res, next);
  return {
    authenticate: handler(EVERYTHING_DONE),
    authenticateDuringPasswordChange: handler({ passwordPending: true, mfaPending: true }),
    authenticateForMfaEnrolment: handler({ passwordPending: false, mfaPending: true }),
    authenticateUnlimited: handler(EVERYTHING_DONE, false),
    authenticateClaims: (req, res, next) =>
      verified('jwt-claims', (err: unknown, claims?: unknown, info?: unknown) => {
        if (err) return next(err);
        if (!claims) return next(refusalError(req, info));
        req.claims = claims as TokenClaims;
        next();
      })(req, res, next),
    countBeforeRead: async (req) => {
      const c = req.claims;
      if (!c || !gate || !giveBack) return false;
      let r: GateResult;
      try {
        r = await gate(c.jti, c.org, true);
      } catch (err) {
        onGateError(err);
        return false;
      }
      if (r.revoked) throw refusalError(req, DENIED);
      if (r.counted) req.counted = r.counted;
      req.countedBeforeRead = true;
      return true;
    },
    giveBackCounts: (req) => giveBackCounts(req),
    alongReader: (name, alongside, recording = null) => {
      const read = alongReader(db, name, alongside, recording);
      return async (req, key, record = null) => {
        const c = req.claims;
        if (!c) throw new AppError('unauthorized', 'Not authenticated');
        // The statement records the read only once the deny-list and the limits have let it through.
        const early = req.countedBeforeRead === true;
        const at = clock.now();
        const event = early && record && recording ? { fields: canonicalOf({ ...auditContext(claimedPrincipal(c)), ...record }), may: claimsMay(req, c), now: at } : undefined;
        let found: AlongRead;
        try {
          found = await read({ c, key, ...(event ? { event } : {}) });
        } catch (err) {
          // Nothing was read for this request: it counts against no limit.
          await giveBackCounts(req);
          throw err;
        }
        // Judged at the instant the statement judged it, so that the code never refuses what the
        // statement recorded for expiring in between (the code decides; the statement only agrees).
        const p = principalOfRow(event ? { now: () => at } : clock, c, found.principalRow);
        const refused = 'error' in p ? refusalError(req, { message: p.error, code: p.code }) : (admissionError(req, p, EVERYTHING_DONE) ?? (early ? null : await admit(req, p, true)));
        if (refused) {
          // Counted before the read: a request refused for its principal counts against no limit.
          await giveBackCounts(req);
          throw refused;
        }
        req.principal = p as Principal;
        return { row: found.row, recorded: found.recorded, at: event ? at : null };
      };
    },
  };
}

/** Who the token says it is, for the event its read records (the principal, once read, must agree). */
function claimedPrincipal(c: TokenClaims): { orgId: number | null; userId: number | null; clientId: string | null } {
  const s = subjectOf(c);
  return { orgId: c.org, userId: s.kind === 'user' ? s.userId : null, clientId: s.kind === 'client' ? s.clientId : null };
}

/** What the claims alone decide of a hot route's admission: the token's scope for it (ADMISSION's `may`, as admissionError asks it). */
export function claimsMay(req: Request, c: TokenClaims): boolean {
  if (subjectOf(c).kind === 'client' && !roles.inOrganisation(c.role)) return false;
  return checkScope(req.method, routeOf(req), scopeHolder(c)).ok;
}

export function principalOf(req: { principal?: Principal }): Principal {
  if (!req.principal) throw new AppError('unauthorized', 'Not authenticated');
  return req.principal;
}

/**
 * A route's own who-may-call check, run before its body is read: a caller the route refuses learns
 * that (403), not which fields its body lacks or that it sent no JSON.
 */
export function allowFirst(check: (p: Principal) => unknown): RequestHandler {
  return (req, _res, next) => {
    check(principalOf(req));
    next();
  };
}
