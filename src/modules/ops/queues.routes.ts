import { createHash } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { Router, type RequestHandler } from 'express';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { AppContext } from '../../context.ts';
import { AppError } from '../../lib/errors.ts';
import { createLimiter, tooMany } from '../../lib/rate-limit.ts';
import { principalOf } from '../auth/auth.middleware.ts';
import { checkCredentials } from '../auth/auth.service.ts';

export const QUEUE_BOARD_PATH = '/admin/queues';
const REALM = 'Basic realm="idverify operators", charset="UTF-8"';

/** Queue contents name organisations and references: only the platform operator may see them. */
export const requirePlatformAdmin: RequestHandler = (req, _res, next) => {
  if (principalOf(req).role !== 'platform_admin') {
    next(new AppError('forbidden', 'Only platform administrators may do this'));
    return;
  }
  next();
};

/**
 * The board's page calls its own API without our bearer header, so a browser needs credentials it
 * resends by itself: HTTP Basic with a platform administrator's username and password. A bearer
 * token of a platform administrator works too (scripts). Successful Basic checks are remembered for
 * a minute because the page polls, and argon2 on every poll would burn CPU shared with the hot path.
 */
function operatorAuth(ctx: AppContext): RequestHandler {
  const remembered = new Map<string, number>();
  const failures = createLimiter(ctx.redis, { prefix: `${ctx.config.REDIS_PREFIX}:rl:board`, points: ctx.config.LOGIN_MAX_FAILURES, durationSeconds: ctx.config.LOGIN_LOCK_SECONDS });
  const basic = async (header: string): Promise<void> => {
    const digest = createHash('sha256').update(header).digest('hex');
    const until = remembered.get(digest);
    if (until && until > Date.now()) return;
    const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const username = colon > 0 ? decoded.slice(0, colon).toLowerCase() : '';
    const state = await failures.get(username || '-');
    if (state && state.consumedPoints >= ctx.config.LOGIN_MAX_FAILURES) throw tooMany(state);
    const user = colon > 0 ? await checkCredentials(ctx.db, username, decoded.slice(colon + 1)) : null;
    if (!user || user.role !== 'platform_admin') {
      await failures.consume(username || '-').catch((err: unknown) => {
        if (!(err instanceof RateLimiterRes)) throw err;
      });
      throw new AppError(user ? 'forbidden' : 'unauthorized', user ? 'Only platform administrators may do this' : 'Not authenticated', {
        headers: user ? {} : { 'WWW-Authenticate': REALM },
      });
    }
    if (remembered.size > 1000) remembered.clear();
    remembered.set(digest, Date.now() + 60_000);
  };
  const bearer: RequestHandler[] = [ctx.authenticate, requirePlatformAdmin];
  return (req, res, next) => {
    const header = req.get('authorization') ?? '';
    if (/^basic /i.test(header)) {
      basic(header).then(() => next(), next);
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
