import type { Server } from 'node:http';
import { createApp } from './app.ts';
import type { Config } from './config.ts';
import { shutdownDeadlineMs, startProcess, stopOnSignals } from './entry.ts';
import { createHttpServer, LISTEN_BACKLOG } from './lib/http-server.ts';
import { exitOnListenFailure, listenAs } from './lib/listen.ts';
import type { Logger } from './lib/logger.ts';
import { createApiDeps } from './runtime.ts';

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
  const { config, logger } = startProcess('api');
  const running = await start(config, logger).catch(exitOnListenFailure);
  stopOnSignals(() => running.stop(), logger, shutdownDeadlineMs(config, 'api'));
}
