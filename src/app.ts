import express, { Router, type Express } from 'express';
import helmet from 'helmet';
import { pinoHttp } from 'pino-http';
import { sql } from 'slonik';
import type { AppContext, AppDeps } from './context.ts';
import { corsPolicy } from './lib/cors.ts';
import { errorHandler, notFound, requestId } from './lib/http.ts';
import { consumeAll, createLimiter, rateLimitMiddleware } from './lib/rate-limit.ts';
import { createAuthenticator, principalOf } from './modules/auth/auth.middleware.ts';
import { authRoutes } from './modules/auth/auth.routes.ts';
import { docsRoutes } from './docs/docs.routes.ts';
import { opsRoutes } from './modules/ops/ops.routes.ts';
import { openApiRoutes } from './openapi/openapi.routes.ts';
import { reasonsRoutes } from './modules/reasons/reasons.routes.ts';
import { verificationRoutes } from './modules/verification/verification.routes.ts';
import { topupRoutes } from './modules/topup/topup.routes.ts';
import { webhookRoutes } from './modules/topup/webhook.routes.ts';

export type { AppDeps };

/** Builds the HTTP application; it owns no connections, so tests and the server share it. */
export function createApp(deps: AppDeps): Express {
  const c = deps.config;
  const redis = deps.producer.redis;
  const perToken = createLimiter(redis, { prefix: `${c.REDIS_PREFIX}:rl:token`, points: c.RATE_LIMIT_PER_TOKEN, durationSeconds: c.RATE_LIMIT_WINDOW_SECONDS });
  const perOrg = createLimiter(redis, { prefix: `${c.REDIS_PREFIX}:rl:org`, points: c.RATE_LIMIT_PER_ORG, durationSeconds: c.RATE_LIMIT_WINDOW_SECONDS });
  const ctx: AppContext = {
    ...deps,
    redis,
    authenticate: createAuthenticator(deps.db, deps.clock, { secret: c.JWT_SECRET, issuer: c.JWT_ISSUER, ttlSeconds: c.JWT_TTL_SECONDS }),
    rateLimit: rateLimitMiddleware(async (req) => {
      const p = principalOf(req);
      const pairs: Parameters<typeof consumeAll>[0] = [[perToken, p.tokenId]];
      if (p.orgId !== null) pairs.push([perOrg, String(p.orgId)]);
      await consumeAll(pairs);
    }),
  };

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', 'loopback');
  app.set('query parser', 'simple');

  app.use(requestId);
  app.use(
    pinoHttp({
      logger: deps.logger,
      genReqId: (req) => (req as express.Request).id,
      // Only method, path and status: bodies, query strings and auth headers never reach the log.
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, path: req.url.split('?')[0] }),
        res: (res: { statusCode: number }) => ({ status: res.statusCode }),
      },
      // 502/503/504 are documented outcomes (upstream down, dependency cut, wait ran out), not our bugs.
      customLogLevel: (_req, res, err) =>
        err || res.statusCode === 500 ? 'error' : res.statusCode > 500 ? 'warn' : res.statusCode >= 400 ? 'info' : 'debug',
      autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/readyz' },
    }),
  );
  app.use((req, res, next) => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      // Route patterns, never raw paths, so personal data in a path cannot become a label.
      const route = (req.route?.path as string | undefined) ?? 'unmatched';
      deps.metrics.httpDuration.observe(
        { method: req.method, route, status: String(res.statusCode) },
        Number(process.hrtime.bigint() - start) / 1e9,
      );
    });
    next();
  });
  app.use(helmet());
  app.use(corsPolicy(c.CORS_ALLOWED_ORIGINS));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const [pgOk, redisOk] = await Promise.all([
      deps.db.oneFirst(sql.unsafe`SELECT 1`).then(
        () => true,
        () => false,
      ),
      redis.ping().then(
        () => true,
        () => false,
      ),
    ]);
    const ok = pgOk && redisOk;
    res.status(ok ? 200 : 503).json(ok ? { status: 'ready', postgres: 'ok', redis: 'ok' } : { detail: 'Not ready', postgres: pgOk ? 'ok' : 'down', redis: redisOk ? 'ok' : 'down' });
  });

  // Operator surfaces (/metrics, /admin/queues) and the documentation page, outside the versioned API.
  app.use(opsRoutes(ctx));
  app.use(docsRoutes());

  const api = Router();
  api.use(openApiRoutes());
  api.use(authRoutes(ctx));
  api.use(verificationRoutes(ctx));
  api.use(reasonsRoutes(ctx));
  api.use(topupRoutes(ctx));
  // Signed by the processor, not by a bearer token; its raw-body parser is its own (see the router).
  api.use(webhookRoutes(ctx));

  // The versioned base is the contract; the unversioned paths stay for older integrations.
  app.use('/v1', api);
  app.use('/', api);

  app.use(notFound);
  app.use(errorHandler(deps.logger));
  return app;
}
