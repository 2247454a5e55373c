import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { sandboxDialect } from './behaviour.ts';
import { hookRoutes } from './hooks.ts';
import { CONTROL_PREFIX, controlRoutes, type SimControls } from './control.ts';
import { dialectFor, type SimDialect } from './dialect.ts';
import { dojahDialect } from './dialect-dojah.ts';
import { premblyDialect } from './dialect-prembly.ts';
import { lookupGate } from './gate.ts';
import { createLimits } from './limits.ts';
import { createLookups } from './lookups.ts';
import { createOutage, type OutageState } from './outage.ts';
import { applyPatch, DEFAULT_SETTINGS, outageSchema, type OutageRequest, type SettingsPatch, type SimSettings } from './settings.ts';
import { createStatsRecorder, type SimStats } from './stats.ts';
import { createTimers } from './timers.ts';
import { createVninStore } from './vnins.ts';
import { sandboxFaces } from './faces.ts';
import { sandboxLiveness } from './liveness.ts';

/**
 * The identity-authority simulator: the server's assembly and lifecycle. It speaks the sandbox,
 * Prembly and Dojah dialects side by side, each at its own paths, over one set of people,
 * latency, limits, outages and counters. README.md in this folder is the API description, binding
 * for tests; keep both in step.
 */
export interface IdentitySimulatorOptions extends SettingsPatch {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** When set, every call needs it, presented the dialect's way (sandbox: `Authorization: Bearer <apiKey>`). */
  apiKey?: string;
  /** When set, Prembly calls need it in `app-id` and Dojah calls in `AppId`. */
  appId?: string;
  /** What the control API expects in `X-Sim-Control`. */
  controlToken?: string;
  /** The sandbox's mail sink: when given, `GET /sandbox/mail` lists what it caught, newest first, without a key. */
  mailbox?: { list(): unknown[] };
  /** The verifier's enterprise code: vNINs made for another code are refused (default `000000`). */
  enterpriseCode?: string;
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
  const { host = '127.0.0.1', port = 0, apiKey, appId, controlToken = DEFAULT_CONTROL_TOKEN, enterpriseCode = '000000', mailbox, ...patch } = opts;
  let settings = applyPatch(DEFAULT_SETTINGS, patch);
  const timers = createTimers();
  const stats = createStatsRecorder();
  const outage = createOutage(timers);
  const limits = createLimits(() => settings);
  const vnins = createVninStore({ enterpriseCode: () => enterpriseCode });
  const lookups = createLookups({ settings: () => settings, timers, vnins });
  const dialects: readonly SimDialect[] = [premblyDialect, dojahDialect, sandboxDialect];
  const dialectOf = (req: Request): SimDialect => dialectFor(dialects, req.path);
  const credentials = { apiKey: apiKey || undefined, appId: appId || undefined };

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
  // For the person trying the sandbox, in a browser: the e-mails the service sent, kept on this machine.
  if (mailbox) {
    app.get('/sandbox/mail', (_req: Request, res: Response) => {
      res.setHeader('Cache-Control', 'no-store');
      res.json({ data: mailbox.list() });
    });
  }
  // The face match sandbox: whom to try a selfie with (no key: public-domain portraits, loopback only).
  app.get('/sandbox/faces', (_req: Request, res: Response) => {
    res.json(sandboxFaces());
  });
  // The liveness sandbox: frame sets per portrait (live ones pass, flat and still ones show the refusals).
  app.get('/sandbox/liveness', (_req: Request, res: Response) => {
    res.json(sandboxLiveness());
  });
  // The person's phone making a vNIN: no API key, not an authority call, not counted.
  app.use(vnins.routes());
  // The sandbox's webhook receiver (the service's signed webhooks, tried on one machine): no key, not counted.
  app.use(hookRoutes());

  app.use((_req: Request, res: Response, next: NextFunction) => {
    stats.received(Date.now());
    res.on('finish', () => stats.answered(res.statusCode));
    next();
  });

  app.use((req: Request, res: Response, next: NextFunction) => {
    const dialect = dialectOf(req);
    if (!dialect.authorised(req, credentials)) return lookups.plain(res, () => dialect.error(res, 401, 'Invalid or missing API key'));
    next();
  });

  app.use(lookupGate({ outage, limits, stats, dialectOf }));
  app.use(express.json({ limit: '16kb' }));
  // The named dialects first: the sandbox's catch-all 404 takes every path they do not claim.
  for (const d of dialects) app.use(d.prefix || '/', d.routes(lookups));

  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const status = typeof err === 'object' && err !== null && 'status' in err && typeof err.status === 'number' ? err.status : 500;
    if (res.headersSent) return;
    const dialect = dialectOf(req);
    // An unreadable body has no query to seed a draw from: it takes the fixed latency.
    lookups.plain(res, () => (status >= 400 && status < 500 ? dialect.error(res, status, 'Malformed request body') : dialect.error(res, 500, 'Internal error')));
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
