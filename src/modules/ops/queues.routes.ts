import { createHash } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { Router, type RequestHandler } from 'express';
import type { AppContext } from '../../context.ts';
import { AppError } from '../../lib/errors.ts';
import { mfaIsOn } from '../mfa/index.ts';
import { assertSignInAllowed, BAD_CREDENTIALS, checkCredentials, clientAddress, guardedSignIn, principalOf } from '../auth/index.ts';
import { findUserForLogin } from '../organisations/index.ts';
import { roles } from '../../lib/roles.ts';

export const QUEUE_BOARD_PATH = '/admin/queues';
const REALM = 'Basic realm="idverify operators", charset="UTF-8"';

/** What a remembered Basic check depends on: any change to the row makes the stamp differ. */
function stampOf(u: { id: number; role: string; password_hash: string; disabled: boolean; org_deleted: boolean }): string {
  return createHash('sha256').update(JSON.stringify([u.id, u.role, u.password_hash, u.disabled, u.org_deleted])).digest('hex');
}

/** Queue contents name organisations and references: only the platform operator may see them. */
export const requirePlatformAdmin: RequestHandler = (req, _res, next) => {
  if (!roles.may(principalOf(req).role, 'operate_platform')) {
    next(new AppError('forbidden', 'Only platform administrators may do this'));
    return;
  }
  next();
};

/**
 * The board's page calls its own API without our bearer header, so a browser needs credentials it
 * resends by itself: HTTP Basic with a platform administrator's username and password. A bearer
 * token of a platform administrator works too (scripts). Basic sign-ins share /login's failure
 * counters and answer like it: 401 for any wrong pair, 429 when limited, 403 only after a right
 * password of someone who is not a platform administrator.
 *
 * The page polls, and argon2 on every poll would burn CPU shared with the hot path, so a right pair
 * is remembered for a minute as a stamp of the user's row (id, role, password hash, disabled). Every
 * request still reads the row and compares: a disabled user or a changed password no longer
 * matches the stamp, and the full check (and its counters) runs again.
 */
export function operatorAuth(ctx: AppContext): RequestHandler {
  const remembered = new Map<string, { stamp: string; until: number }>();
  const basic = async (header: string, address: string): Promise<void> => {
    const digest = createHash('sha256').update(header).digest('hex');
    const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const username = colon > 0 ? decoded.slice(0, colon) : '';
    const password = colon > 0 ? decoded.slice(colon + 1) : '';
    const known = remembered.get(digest);
    if (known && known.until > Date.now()) {
      await assertSignInAllowed(ctx, username, address);
      const row = await findUserForLogin(ctx.db, username);
      // Two-factor sign-in turned on since: the remembered Basic check no longer suffices.
      if (row && stampOf(row) === known.stamp && roles.may(row.role, 'operate_platform') && !row.disabled && !(await mfaIsOn(ctx.db, row.id))) return;
      remembered.delete(digest);
    }
    // HTTP Basic cannot carry a one-time code: with two-factor sign-in on, the sign-in is not complete
    // (and counts as failed); such an operator uses a bearer token from POST /login.
    let needsToken = false;
    const user = await guardedSignIn(ctx, username, address, async () => {
      const found = colon > 0 ? await checkCredentials(ctx.db, username, password) : null;
      if (found && (await mfaIsOn(ctx.db, found.id))) needsToken = true;
      return needsToken ? null : found;
    });
    if (needsToken) throw new AppError('unauthorized', 'Two-factor sign-in is on: use a bearer token from POST /login', { extra: { code: 'mfa_required' } });
    if (!user) throw new AppError('unauthorized', BAD_CREDENTIALS, { headers: { 'WWW-Authenticate': REALM } });
    if (!roles.may(user.role, 'operate_platform')) throw new AppError('forbidden', 'Only platform administrators may do this');
    if (remembered.size > 1000) remembered.clear();
    remembered.set(digest, { stamp: stampOf(user), until: Date.now() + 60_000 });
  };
  const bearer: RequestHandler[] = [ctx.authenticateUnlimited, requirePlatformAdmin];
  return (req, res, next) => {
    const header = req.get('authorization') ?? '';
    if (/^basic /i.test(header)) {
      basic(header, clientAddress(req)).then(() => next(), next);
      return;
    }
    if (!header) {
      next(new AppError('unauthorized', 'Not authenticated', { headers: { 'WWW-Authenticate': REALM } }));
      return;
    }
    bearer[0]!(req, res, (err?: unknown) => (err ? next(err) : bearer[1]!(req, res, next)));
  };
}

/** bull-board over every queue of the catalog, at /admin/queues, for platform administrators only. */
export function queueBoardRoutes(ctx: AppContext): Router {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(QUEUE_BOARD_PATH);
  createBullBoard({
    queues: ctx.producer.queues().map((q) => new BullMQAdapter(q)),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'idverify queues' } },
  });
  const r = Router();
  // Authentication runs before bull-board sees the request, static assets included: nothing of
  // the board is served to an anonymous caller.
  r.use(QUEUE_BOARD_PATH, operatorAuth(ctx), serverAdapter.getRouter());
  return r;
}
