// The API process (Procfile `web`, `npm run web`): the HTTP application (createApp, which tests build
// on deps of their own) and the process that serves it (start/stop). What it is wired from is
// src/wiring.ts, shared with the worker processes.
import type { Server } from 'node:http';
import express, { Router, type Express } from 'express';
import helmet from 'helmet';
import { sql } from 'slonik';
import type { AppContext, AppDeps } from './context.ts';
import { accessLog } from './lib/access-log.ts';
import { corsPolicy } from './lib/cors.ts';
import { CsvExportSlots } from './lib/csv-export.ts';
import { describe } from './lib/errors.ts';
import { errorHandler, notFound, requestId } from './lib/http.ts';
import { consumeAll, createLimiter, overLimit, rateLimitMiddleware } from './lib/rate-limit.ts';
import { requestScope } from './lib/request-scope.ts';
import { createIntake } from './lib/intake.ts';
import { markUnversioned, unmarkUnversioned } from './lib/versioning.ts';
import { accountsRoutes } from './modules/accounts/index.ts';
import { auditRoutes } from './modules/audit/index.ts';
import { batchRoutes } from './modules/batches/index.ts';
import { authRoutes, createAuthenticator, principalOf, redisGate, redisGiveBack, redisRevocations, requireAccountsKeeper, revokedKey } from './modules/auth/index.ts';
import { docsRoutes } from './docs/docs.routes.ts';
import { faviconRoutes } from './favicon/favicon.routes.ts';
import { opsRoutes } from './modules/ops/index.ts';
import { platformPageRoutes, platformRoutes } from './modules/platform/index.ts';
import { portalRoutes } from './modules/portal/index.ts';
import { openApiRoutes } from './api-document/openapi.routes.ts';
import { reasonsRoutes } from './modules/reasons/index.ts';
import { settingsRoutes, teamRoutes } from './modules/team/index.ts';
import { autoTopupRoutes, topupHistoryRoutes, topupRoutes, webhookRoutes } from './modules/topup/index.ts';
import { verificationHistoryRoutes, verificationRoutes } from './modules/verification/index.ts';
import { ledgerRoutes } from './modules/wallet/index.ts';
import { webhooksRoutes } from './modules/webhooks/index.ts';
import { linkPageRoutes, linksRoutes } from './modules/links/index.ts';
import { receiptPageRoutes, receiptsRoutes } from './modules/receipts/index.ts';
import { livenessRoutes } from './modules/liveness/index.ts';
import { statementRoutes } from './modules/statements/index.ts';
import { faceReadiness } from './modules/face/index.ts';
import { loadConfigOrExit, type Config } from './config.ts';
import { shutdownDeadlineMs } from './jobs/budgets.ts';
import { startProcess, stopOnSignals } from './lib/process.ts';
import { createHttpServer, LISTEN_BACKLOG } from './lib/http-server.ts';
import { exitOnListenFailure, listenAs } from './lib/listen.ts';
import type { Logger } from './lib/logger.ts';
import { createApiDeps } from './wiring.ts';

/** Builds the HTTP application; it owns no connections, so tests and the server share it. */
export function createApp(deps: AppDeps): Express {
  const c = deps.config;
  const redis = deps.producer.redis;
  const perToken = createLimiter(redis, { prefix: `${c.REDIS_PREFIX}:rl:token`, points: c.RATE_LIMIT_PER_TOKEN, durationSeconds: c.RATE_LIMIT_WINDOW_SECONDS });
  const perOrg = createLimiter(redis, { prefix: `${c.REDIS_PREFIX}:rl:org`, points: c.RATE_LIMIT_PER_ORG, durationSeconds: c.RATE_LIMIT_WINDOW_SECONDS });
  const revocations = redisRevocations(redis, c.REDIS_PREFIX, deps.clock);
  // The deny-list read and both counters in one round trip (one Redis server; a cluster keeps the
  // separate calls). Its keys are the limiters' own, so counts agree whichever path took them.
  const gateKeys = { revoked: (jti: string) => revokedKey(c.REDIS_PREFIX, jti), token: (jti: string) => `${c.REDIS_PREFIX}:rl:token:${jti}`, org: (orgId: number) => `${c.REDIS_PREFIX}:rl:org:${orgId}` };
  const gate = redisGate(redis, gateKeys, c.RATE_LIMIT_WINDOW_SECONDS);
  // Counted by the authentication's own Redis call, only the comparison is left; without those
  // counts (a cluster, or that call failed) the limiter counts here.
  async function enforceRateLimit(req: express.Request): Promise<void> {
    if (req.counted) return overLimit([[req.counted.token, c.RATE_LIMIT_PER_TOKEN], [req.counted.org, c.RATE_LIMIT_PER_ORG]]);
    const p = principalOf(req);
    const pairs: Parameters<typeof consumeAll>[0] = [[perToken, p.tokenId]];
    if (p.orgId !== null) pairs.push([perOrg, String(p.orgId)]);
    await consumeAll(pairs);
  }
  // Logged at most once a minute: while Redis is away every request would say it.
  let gateErrorLoggedAt = 0;
  const onGateError = (err: unknown) => {
    if (Date.now() - gateErrorLoggedAt < 60_000) return;
    gateErrorLoggedAt = Date.now();
    deps.logger.warn({ err: describe(err) }, 'deny-list and rate-limit script failed; separate calls used');
  };
  const auth = createAuthenticator(deps.db, deps.clock, { secrets: c.jwtSecrets, issuer: c.JWT_ISSUER, ttlSeconds: c.JWT_TTL_SECONDS }, revocations, gate, onGateError, redisGiveBack(redis, gateKeys));
  // The requery counts before its read, so that its read can record its audit event. A request
  // already over a limit gives its counts back and is counted and refused after its principal, as
  // on every other route: a principal that is refused never keeps a count.
  async function countBeforeRead(req: express.Request): Promise<boolean> {
    if (!(await auth.countBeforeRead(req))) return false;
    try {
      await enforceRateLimit(req);
      return true;
    } catch {
      await auth.giveBackCounts(req);
      return false;
    }
  }
  const ctx: AppContext = {
    ...deps,
    redis,
    revocations,
    ...auth,
    countBeforeRead,
    rateLimit: rateLimitMiddleware(enforceRateLimit),
    enforceRateLimit,
    faceIntake: createIntake({
      slots: c.FACE_INTAKE_PER_PROCESS,
      registry: deps.metrics.registry,
      gauge: { name: 'face_intake', help: 'Face match intake slots of this API process (FACE_INTAKE_PER_PROCESS): taken, and requests (body read) waiting for one' },
    }).slot,
    csvExports: new CsvExportSlots(
      { perProcess: c.CSV_EXPORTS_PER_PROCESS, perOrg: c.CSV_EXPORTS_PER_ORG, minBytes: c.CSV_EXPORT_MIN_BYTES, windowMs: c.CSV_EXPORT_MIN_WINDOW_MS },
      { redis, prefix: c.REDIS_PREFIX },
    ),
  };

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Only the proxies the operator names may set the client address (sign-in counters use it).
  app.set('trust proxy', c.TRUST_PROXY.length > 0 ? c.TRUST_PROXY : false);
  app.set('query parser', 'simple');

  app.use(requestId);
  // Every audit event the request causes takes its id and address from here (after `trust proxy`).
  app.use(requestScope);
  app.use(
    accessLog(
      deps.logger,
      (labels, seconds) => deps.metrics.httpDuration.observe(labels, seconds),
      (req) => req.url === '/healthz' || req.url === '/readyz',
    ),
  );
  app.use(helmet());
  app.use(corsPolicy(c.CORS_ALLOWED_ORIGINS));
  // The verification routes (the requery and the verification calls, the hottest of all) are tried
  // first under /v1: every router before them was walked, layer by layer, on each of their requests.
  // No router before them in `api` has middleware of its own for their paths, so nothing else changes.
  // Keep it so: middleware for these paths belongs inside verificationRoutes (on /v1 it would not run
  // if mounted in `api` before them, while the portal and the unversioned paths would still run it).
  const verification = verificationRoutes(ctx);
  app.use('/v1', verification);

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
    // Face matches need a face worker; the rest of the API does not, so it does not decide readiness.
    const face = redisOk ? await faceReadiness(redis, c.REDIS_PREFIX).catch(() => 'no_worker' as const) : ('no_worker' as const);
    res.status(ok ? 200 : 503).json(ok ? { status: 'ready', postgres: 'ok', redis: 'ok', face } : { detail: 'Not ready', postgres: pgOk ? 'ok' : 'down', redis: redisOk ? 'ok' : 'down', face });
  });

  // Operator surfaces (/metrics, /admin/queues) and the documentation page, outside the versioned API.
  app.use(opsRoutes(ctx));
  app.use(platformPageRoutes(ctx));
  app.use(docsRoutes());
  app.use(faviconRoutes());
  // The page a verification link opens (/v/<token>): for a person, outside the versioned API.
  app.use(linkPageRoutes(ctx));
  // The person's consent receipt (/r/<token>), given after a link's submission.
  app.use(receiptPageRoutes(ctx));

  const api = Router();
  api.use(openApiRoutes({ publicBaseUrl: c.publicBaseUrl }));
  api.use(authRoutes(ctx));
  api.use(teamRoutes(ctx));
  api.use(settingsRoutes(ctx));
  api.use(accountsRoutes(ctx));
  api.use(verification);
  api.use(batchRoutes(ctx));
  api.use(reasonsRoutes(ctx));
  api.use(topupRoutes(ctx));
  api.use(autoTopupRoutes(ctx));
  api.use(platformRoutes(ctx));
  api.use(topupHistoryRoutes(ctx));
  api.use(verificationHistoryRoutes(ctx));
  api.use(receiptsRoutes(ctx));
  api.use(ledgerRoutes(ctx, { accountsKeeper: (req) => requireAccountsKeeper(principalOf(req)) }));
  api.use(auditRoutes(ctx, { accountsKeeper: (req) => requireAccountsKeeper(principalOf(req)) }));
  api.use(webhooksRoutes(ctx));
  api.use(linksRoutes(ctx));
  api.use(statementRoutes(ctx));
  api.use(livenessRoutes(ctx));
  // Signed by the processor, not by a bearer token; its raw-body parser is its own (see the router).
  api.use(webhookRoutes(ctx));

  // The versioned base is the contract; the unversioned paths stay for older integrations, marked
  // deprecated on every answer.
  app.use('/v1', api);
  // The portal reaches the same routes through its session bridge, with the same rules.
  app.use(portalRoutes(ctx, api));
  app.use('/', markUnversioned, api, unmarkUnversioned);

  app.use(notFound);
  app.use(errorHandler(deps.logger));
  return app;
}

export type RunningServer = { url: string; server: Server; stop(): Promise<void> };

/** Starts the API (the Procfile's `web`). Redis and PostgreSQL are connected before the port opens. */
export async function start(config: Config, logger: Logger): Promise<RunningServer> {
  const deps = await createApiDeps(config, logger);
  const app = createApp(deps);
  const server = createHttpServer(app);
  try {
    await listenAs('PORT', config.HOST, config.PORT, () =>
      new Promise<void>((resolve, reject) => {
        server.once('listening', resolve);
        server.once('error', reject);
        // With several web processes on one port the kernel spreads connections among them.
        server.listen({ port: config.PORT, host: config.HOST, reusePort: config.WEB_PROCESSES > 1, backlog: LISTEN_BACKLOG });
      }),
    );
  } catch (err) {
    await deps.close();
    throw err;
  }
  // Longer than any load balancer's idle timeout, so it never closes a connection the balancer reuses.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  logger.info({ port }, 'api listening');
  let stopping: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    stop() {
      stopping ??= (async () => {
        // Stop accepting, let in-flight requests finish (bounded by the grace period), then close pools.
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const grace = setTimeout(() => server.closeAllConnections(), config.SHUTDOWN_GRACE_MS);
        await closed;
        clearTimeout(grace);
        await deps.close();
        logger.info('api stopped');
      })();
      return stopping;
    },
  };
}

if (import.meta.main) {
  const { config, logger } = startProcess('api', loadConfigOrExit);
  const running = await start(config, logger).catch(exitOnListenFailure);
  stopOnSignals(() => running.stop(), logger, shutdownDeadlineMs(config, 'api'));
}
