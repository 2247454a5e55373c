import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { authorityRoutes } from './behaviour.ts';
import { CONTROL_PREFIX, controlRoutes, type SimControls } from './control.ts';
import { lookupGate } from './gate.ts';
import { createLimits } from './limits.ts';
import { createOutage, type OutageState } from './outage.ts';
import { applyPatch, DEFAULT_SETTINGS, outageSchema, type OutageRequest, type SettingsPatch, type SimSettings } from './settings.ts';
import { createStatsRecorder, type SimStats } from './stats.ts';
import { createTimers } from './timers.ts';

/**
 * The identity-authority simulator ("sandbox" dialect): the server's assembly and lifecycle.
 * README.md in this folder is the API description, binding for tests; keep both in step.
 */
export interface IdentitySimulatorOptions extends SettingsPatch {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** When set, every call needs `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** What the control API expects in `X-Sim-Control`. */
  controlToken?: string;
}

export interface IdentitySimulator {
  url: string;
  close(): Promise<void>;
  stats(): SimStats;
  resetStats(): void;
  /** Changes latency, limits or hangMs from now on; throws on an invalid value. */
  configure(patch: SettingsPatch): SimSettings;
  settings(): SimSettings;
  /** Starts (or, with mode `none`, ends) an outage. */
  outage(request: OutageRequest): OutageState;
}

export const DEFAULT_CONTROL_TOKEN = 'sim-control';

export async function startIdentitySimulator(opts: IdentitySimulatorOptions = {}): Promise<IdentitySimulator> {
  const { host = '127.0.0.1', port = 0, apiKey, controlToken = DEFAULT_CONTROL_TOKEN, ...patch } = opts;
  let settings = applyPatch(DEFAULT_SETTINGS, patch);
  const timers = createTimers();
  const stats = createStatsRecorder();
  const outage = createOutage(timers);
  const limits = createLimits(() => settings);

  const controls: SimControls = {
    settings: () => settings,
    configure: (p) => (settings = applyPatch(settings, p)),
    outage: (request) => {
      const r = outageSchema.parse(request);
      return outage.start(r.mode, r.mode === 'none' ? 0 : r.forMs, Date.now());
    },
    outageState: () => outage.current(Date.now()),
    stats: () => stats.snapshot(),
    resetStats: () => {
      stats.reset();
      return stats.snapshot();
    },
  };

  const app = express();
  app.disable('x-powered-by');
  app.use(CONTROL_PREFIX, controlRoutes(controlToken, controls));

  app.use((_req: Request, res: Response, next: NextFunction) => {
    stats.received(Date.now());
    res.on('finish', () => stats.answered(res.statusCode));
    next();
  });

  app.use((req: Request, res: Response, next: NextFunction) => {
    if (apiKey !== undefined && apiKey !== '' && req.get('authorization') !== `Bearer ${apiKey}`) {
      timers.answerAfter(res, settings.latencyMs, () => res.status(401).json({ status: false, message: 'Invalid or missing API key' }));
      return;
    }
    next();
  });

  app.use(lookupGate({ outage, limits, stats }));
  app.use(express.json({ limit: '16kb' }));
  app.use(authorityRoutes({ settings: () => settings, timers }));

  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = typeof err === 'object' && err !== null && 'status' in err && typeof err.status === 'number' ? err.status : 500;
    if (res.headersSent) return;
    const send = (): void => {
      if (status >= 400 && status < 500) res.status(status).json({ status: false, message: 'Malformed request body' });
      else res.status(500).json({ status: false, message: 'Internal error', id: randomUUID() });
    };
    // An unreadable body has no query to seed a draw from: it takes the fixed latency.
    timers.answerAfter(res, settings.latencyMs, send);
  });

  const server: Server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${urlHost}:${address.port}`,
    stats: controls.stats,
    resetStats: () => void controls.resetStats(),
    configure: (p) => controls.configure(p),
    settings: controls.settings,
    outage: controls.outage,
    close: () =>
      new Promise<void>((resolve, reject) => {
        timers.clearAll();
        server.close((err) => (err ? reject(err) : resolve()));
        // Held calls and keep-alive connections would otherwise keep close() waiting.
        server.closeAllConnections();
      }),
  };
}
