import http from 'node:http';
import { inject } from 'vitest';
import type { Config } from '../../src/config.ts';
import { identityDialectFromEnv } from '../../bench/lib/dialect.ts';
import { freePort, repoPath, sleep, spawnNode, waitForHttp, type NodeChild } from '../../bench/lib/proc.ts';
import { waitForWorkers } from '../../bench/lib/stack.ts';
import { createTestDatabase, startStack, type Stack, type StackOptions } from '../setup/harness.ts';
import { assertInvariants, type InvariantReport } from './invariants.ts';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.ts';

/**
 * The harness stack (API in this process, both simulators) with the parts chaos needs: the workers
 * as real `node workers/main.ts` child processes, optionally more API processes (`node src/server.ts`,
 * each on a port of its own), and optionally Redis and/or PostgreSQL reached through TCP proxies the
 * test can cut. Invariants are always checked over direct connections.
 */
export type ApiProcess = { child: NodeChild; url: string };

export type ChaosStack = {
  stack: Stack;
  redisProxy: TcpProxy | null;
  pgProxy: TcpProxy | null;
  directDatabaseUrl: string;
  directRedisUrl: string;
  workerEnv: Record<string, string>;
  workers: NodeChild[];
  startWorker(opts?: { waitReady?: boolean }): Promise<NodeChild>;
  /** The API processes started so far, with the address each listens on. */
  apis: ApiProcess[];
  /** One more API process, configured like the stack; resolves once it answers /healthz. */
  startApi(): Promise<ApiProcess>;
  /** SIGKILL every worker process. */
  killWorkers(): Promise<void>;
  invariants(opts?: { settleMs?: number; processor?: boolean }): Promise<InvariantReport>;
  close(): Promise<void>;
};

/** The environment a child process needs to be configured exactly like the in-process stack. */
export function envFromConfig(config: Config): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(config)) {
    if (!/^[A-Z][A-Z0-9_]*$/.test(k) || v === undefined || v === null) continue;
    // Lists of strings are comma-separated variables (CORS_ALLOWED_ORIGINS, REDIS_CLUSTER_NODES, TRUST_PROXY); BONUS_TIERS is JSON.
    if (Array.isArray(v)) env[k] = v.every((x) => typeof x === 'string') ? v.join(',') : JSON.stringify(v);
    else if (typeof v === 'object') env[k] = JSON.stringify(v);
    else env[k] = String(v);
  }
  return env;
}

export async function startChaosStack(
  o: StackOptions & { proxyRedis?: boolean; proxyPostgres?: boolean; workerProcesses?: number; apiProcesses?: number; workerLogLevel?: string } = {},
): Promise<ChaosStack> {
  const redisUrl = inject('redisUrl');
  const redisTarget = new URL(redisUrl);
  const redisProxy = o.proxyRedis ? await startTcpProxy({ host: redisTarget.hostname, port: Number(redisTarget.port || 6379) }) : null;
  let ownDb: { url: string; drop(): Promise<void> } | null = null;
  let pgProxy: TcpProxy | null = null;
  // The scenarios here break Redis, PostgreSQL and workers under one organisation's heavy load; the
  // per-organisation in-flight cap (tested on its own) is raised out of their way.
  const env: Record<string, string> = { ORG_MAX_IN_FLIGHT: '100000', ...o.env };
  if (redisProxy) env.REDIS_URL = redisProxy.url(redisUrl);
  if (o.proxyPostgres) {
    ownDb = await createTestDatabase();
    const t = new URL(ownDb.url);
    pgProxy = await startTcpProxy({ host: t.hostname, port: Number(t.port || 5432) });
    env.DATABASE_URL = pgProxy.url(ownDb.url);
  }
  // IDENTITY_DIALECT of the run picks the adapter; the harness's simulator speaks every dialect.
  const stack = await startStack({ dialect: identityDialectFromEnv(), ...o, workers: false, env });
  const directDatabaseUrl = ownDb?.url ?? stack.config.DATABASE_URL;
  const workerEnv = { ...envFromConfig(stack.config), LOG_LEVEL: o.workerLogLevel ?? 'warn', METRICS_TOKEN: '', WORKER_METRICS_PORT: '0' };
  const workers: NodeChild[] = [];

  const startWorker = async (w: { waitReady?: boolean } = {}) => {
    const child = spawnNode(`worker-${workers.length + 1}`, repoPath('workers/main.ts'), workerEnv);
    workers.push(child);
    if (w.waitReady !== false) await waitForWorkers(redisUrl, stack.config.REDIS_PREFIX, child, 60_000);
    return child;
  };
  for (let i = 0; i < (o.workerProcesses ?? 1); i++) await startWorker();

  const apis: ApiProcess[] = [];
  const startApi = async () => {
    const port = await freePort();
    // The workers' environment: the stack's configuration, warn-level logs, no metrics token.
    const child = spawnNode(`api-${apis.length + 1}`, repoPath('src/server.ts'), { ...workerEnv, HOST: '127.0.0.1', PORT: String(port) });
    const api = { child, url: `http://127.0.0.1:${port}` };
    apis.push(api);
    await waitForHttp(`${api.url}/healthz`, { child, timeoutMs: 60_000 });
    return api;
  };
  for (let i = 0; i < (o.apiProcesses ?? 0); i++) await startApi();

  return {
    stack,
    redisProxy,
    pgProxy,
    directDatabaseUrl,
    directRedisUrl: redisUrl,
    workerEnv,
    workers,
    startWorker,
    apis,
    startApi,
    async killWorkers() {
      const alive = workers.filter((w) => w.alive);
      for (const w of alive) w.kill('SIGKILL');
      await Promise.all(alive.map((w) => w.exited));
    },
    invariants: (i = {}) =>
      assertInvariants({
        databaseUrl: directDatabaseUrl,
        redisUrl,
        prefix: stack.config.REDIS_PREFIX,
        settleMs: i.settleMs ?? 60_000,
        ...(i.processor === false ? {} : { processor: { url: stack.paymentSim.url, secretKey: stack.config.PAYSTACK_SECRET_KEY } }),
      }),
    async close() {
      redisProxy?.restore();
      pgProxy?.restore();
      await Promise.all([...apis.map((a) => a.child.stop(10_000)), ...workers.map((w) => w.stop(10_000))]);
      // Bounded, as a guard: the API's own close once hung after a Redis cut (BullMQ's close waits
      // for an 'end' a reconnecting connection never emits; the producer now bounds it, see
      // test/api/close-during-redis-cut.test.ts). The file's result is decided by then, and the
      // global teardown drops what is left (the run's databases and Redis keys).
      const closed = await Promise.race([stack.close().then(() => true, () => true), sleep(30_000).then(() => false)]);
      if (!closed) console.warn('chaos stack: the service had not closed after 30 s; the global teardown cleans up after it');
      await redisProxy?.close();
      await pgProxy?.close();
      await ownDb?.drop();
      await sleep(0);
    },
  };
}

/** Runs `fn` for each item with at most `limit` in flight; results in input order. */
export async function pool<T, R>(items: T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

/** A NIN the identity simulator finds (never starting with 0 or 5), unique per call. */
let ninCounter = 0;
export function liveNin(): string {
  ninCounter = (ninCounter + 1) % 1e9;
  const first = '12346789'[Math.floor(Math.random() * 8)]!;
  return `${first}${String(ninCounter).padStart(9, '0')}${Math.floor(Math.random() * 10)}`;
}

export type RawResponse = { status: number; body: any; ms: number };

/**
 * A plain node:http request (no client-side pooling limits: each call its own socket unless an agent
 * is given), with a hard client deadline so a hanging server shows up as status 0, not a stuck test.
 */
export function request(
  url: string,
  o: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number; agent?: http.Agent } = {},
): Promise<RawResponse> {
  const started = performance.now();
  return new Promise((resolve) => {
    // An explicit length: without it Node sends a GET/DELETE body unframed and the server sees garbage.
    const headers = o.body !== undefined ? { 'content-length': String(Buffer.byteLength(o.body)), ...o.headers } : o.headers;
    const req = http.request(url, { method: o.method ?? 'GET', headers, agent: o.agent ?? false, timeout: o.timeoutMs ?? 60_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          // Not JSON.
        }
        resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - started });
      });
      res.on('error', () => resolve({ status: 0, body: 'response error', ms: performance.now() - started }));
    });
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', (err) => resolve({ status: 0, body: err.message, ms: performance.now() - started }));
    if (o.body !== undefined) req.write(o.body);
    req.end();
  });
}

export function verifyNin(baseUrl: string, token: string, nin: string, timeoutMs?: number): Promise<RawResponse> {
  return request(`${baseUrl}/v1/verify-nin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ nin, reason: 'corporate' }),
    ...(timeoutMs ? { timeoutMs } : {}),
  });
}
