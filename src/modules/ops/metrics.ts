import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Queue } from 'bullmq';
import { Router } from 'express';
import { Gauge, type Registry } from 'prom-client';
import { AppError } from '../../lib/errors.ts';
import { exitOnListenFailure, listenAs } from '../../lib/listen.ts';
import type { Metrics } from '../../lib/metrics.ts';

export type MetricsAccess = 'disabled' | 'denied' | 'allowed';

/**
 * Both sides are hashed first so the comparison takes the same time whatever the length of the
 * guess; an empty configured token disables the endpoint instead of opening it.
 */
export function metricsAccess(token: string, authorization: string | undefined): MetricsAccess {
  if (!token) return 'disabled';
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization ?? '');
  if (!m) return 'denied';
  const given = createHash('sha256').update(m[1]!).digest();
  const expected = createHash('sha256').update(token).digest();
  return timingSafeEqual(given, expected) ? 'allowed' : 'denied';
}

const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'] as const;

/**
 * Registers `queue_jobs{queue, state}` on the API registry. Queue depth is read from Redis when
 * Prometheus scrapes (prom-client runs `collect` before each scrape), not kept up to date on every
 * job event: a scrape every 15 s costs one round trip per queue, whereas event listeners would cost
 * one per job. It lives here rather than in lib/metrics.ts because the queues exist only once the
 * producer does. BullMQ's own Queue.exportPrometheusMetrics() is not used: it names the series
 * `bullmq_job_count` and returns text outside the registry, and dashboards scrape `queue_jobs`.
 */
export function collectQueueDepth(metrics: Metrics, queues: () => Queue[]): Gauge<'queue' | 'state'> {
  return new Gauge({
    name: 'queue_jobs',
    help: 'Jobs per queue and state',
    labelNames: ['queue', 'state'] as const,
    registers: [metrics.registry],
    async collect() {
      try {
        const counts = await Promise.all(queues().map(async (q) => [q.name, await q.getJobCounts(...JOB_STATES)] as const));
        this.reset();
        for (const [queue, byState] of counts) {
          for (const state of JOB_STATES) this.set({ queue, state }, byState[state] ?? 0);
        }
      } catch {
        // Redis out of reach: the series disappear rather than report stale depths.
        this.reset();
      }
    },
  });
}

/** GET /metrics for the API process: Prometheus text, behind METRICS_TOKEN. */
export function metricsRoutes(registry: Registry, token: string): Router {
  const r = Router();
  r.get('/metrics', async (req, res, next) => {
    const access = metricsAccess(token, req.get('authorization'));
    // Disabled looks exactly like an unknown path, so a scan learns nothing.
    if (access === 'disabled') return next();
    if (access === 'denied') throw new AppError('unauthorized', 'Not authenticated', { headers: { 'WWW-Authenticate': 'Bearer' } });
    const body = await registry.metrics();
    res.setHeader('Content-Type', registry.contentType);
    res.setHeader('Cache-Control', 'no-store');
    res.send(body);
  });
  return r;
}

/**
 * The worker process has its own registry (job durations, upstream calls, credits); it serves it
 * on a port of its own with the same token, for Prometheus to scrape beside the API.
 */
export async function startMetricsServer(o: { registry: Registry; token: string; port: number; host?: string }): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const access = metricsAccess(o.token, req.headers.authorization);
    const reply = (status: number, detail: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...headers });
      res.end(JSON.stringify({ detail }));
    };
    if (req.method !== 'GET' || path !== '/metrics' || access === 'disabled') return reply(404, 'Not Found');
    if (access === 'denied') return reply(401, 'Not authenticated', { 'WWW-Authenticate': 'Bearer' });
    o.registry.metrics().then(
      (body) => {
        res.writeHead(200, { 'Content-Type': o.registry.contentType, 'Cache-Control': 'no-store' });
        res.end(body);
      },
      () => reply(500, 'Internal server error'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host ?? '0.0.0.0', () => resolve());
  });
  return server;
}

/**
 * A worker or face worker process's own metrics server, only when METRICS_TOKEN is set, on the port
 * its variable names (WORKER_METRICS_PORT, FACE_METRICS_PORT). A port that cannot be opened stops the
 * process as a configuration error naming the variable (lib/listen.ts), once `stop` has let the jobs
 * it is already running finish.
 */
export async function serveProcessMetrics(o: { variable: string; port: number; host: string; token: string | undefined; registry: Registry; stop: () => Promise<void> }): Promise<Server | null> {
  const token = o.token;
  if (!token) return null;
  return listenAs(o.variable, o.host, o.port, () => startMetricsServer({ registry: o.registry, token, port: o.port, host: o.host })).catch(async (err: unknown) => {
    await o.stop();
    return exitOnListenFailure(err);
  });
}
