import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { QUEUES, queuePrefix } from '../../src/jobs/catalog.ts';
import { createDb } from '../../src/lib/db.ts';
import { createOrganisation, createUser, setMaxInFlight } from '../../src/modules/organisations/index.ts';
import { adjustWallet } from '../../src/modules/wallet/index.ts';
import { BENCH_IDENTITY_APP_ID, identityDialectFromEnv } from './dialect.ts';
import { freePort, repoPath, sleep, spawnNode, waitForHttp, type NodeChild } from './proc.ts';
import { BENCH_IDENTITY_KEY, BENCH_JWT_SECRET, BENCH_PAYSTACK_SECRET, createBenchDatabase, deleteRedisPrefix } from './stack.ts';
import { connectionString } from '../../src/lib/redis.ts';

/**
 * The service as production runs it for the multi-tenant scenarios: several API processes sharing
 * one port (SO_REUSEPORT), several worker processes, the identity simulator as a process of its own
 * (driven through its control API), a database and Redis prefix of its own.
 */
export type TenantStack = {
  apiUrl: string;
  identityUrl: string;
  prefix: string;
  redisUrl: string;
  db: DatabasePool;
  workers: NodeChild[];
  /** Starts one more worker process and waits until it serves the lookups queue. */
  startWorker(): Promise<NodeChild>;
  sim: SimControl;
  createOrg(o: { units: number; maxInFlight?: number }): Promise<{ orgId: number; token: string }>;
  /** The identity-authority circuit as the API process that answers sees it (/metrics): 0 closed, 1 half-open, 2 open. */
  circuitState(): Promise<number>;
  ledger(): Promise<{ debits: number; reserved: number; pending: number; duplicateDebits: number }>;
  stop(): Promise<void>;
};

export type SimStats = {
  calls: number;
  accepted: number;
  peakConcurrency: number;
  rateLimited: number;
  concurrencyLimited: number;
  statuses: Record<string, number>;
  seconds: { second: number; received: number; accepted: number; limited: number }[];
};

export type SimControl = {
  configure(settings: Record<string, unknown>): Promise<void>;
  outage(o: { mode: '503' | 'hang' | 'none'; forMs?: number }): Promise<void>;
  stats(): Promise<SimStats>;
  reset(): Promise<void>;
};

const SIM_CONTROL_TOKEN = 'bench-sim-control';
const BENCH_METRICS_TOKEN = 'bench-metrics';

function simControl(url: string): SimControl {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}/__sim/${path}`, {
      method,
      headers: { 'x-sim-control': SIM_CONTROL_TOKEN, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`simulator ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<unknown>;
  };
  return {
    configure: async (s) => void (await call('POST', 'config', s)),
    outage: async (o) => void (await call('POST', 'outage', o.mode === 'none' ? { mode: 'none' } : o)),
    stats: async () => (await call('GET', 'stats')) as SimStats,
    reset: async () => void (await call('POST', 'reset', {})),
  };
}

export async function startTenantStack(o: { apiProcesses: number; workerProcesses: number; env?: Record<string, string>; sim?: Record<string, string> }): Promise<TenantStack> {
  const database = await createBenchDatabase();
  const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = `idvbench-${randomBytes(4).toString('hex')}`;
  const children: NodeChild[] = [];
  const workers: NodeChild[] = [];
  let db: DatabasePool | undefined;
  const stopAll = async () => {
    // Workers first (they drain), then the API processes, then the simulators.
    for (const c of [...workers, ...children.filter((c) => !workers.includes(c))]) await c.stop(8000);
  };
  try {
    const [identityPort, paymentPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    const identityUrl = `http://127.0.0.1:${identityPort}`;
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    const idSim = spawnNode('identity-sim', repoPath('src/simulators/identity-authority/main.ts'), {
      PORT: String(identityPort),
      SIM_HOST: '127.0.0.1',
      SIM_API_KEY: BENCH_IDENTITY_KEY,
      SIM_APP_ID: BENCH_IDENTITY_APP_ID,
      SIM_CONTROL_TOKEN,
      ...o.sim,
    });
    const paySim = spawnNode('payment-sim', repoPath('src/simulators/payment-processor/main.ts'), {
      PORT: String(paymentPort),
      SIM_HOST: '127.0.0.1',
      PAYSTACK_SECRET_KEY: BENCH_PAYSTACK_SECRET,
      SIM_WEBHOOK_URL: `${apiUrl}/v1/webhooks/paystack`,
    });
    children.push(idSim, paySim);
    await waitForHttp(`${identityUrl}/v1/reasons`, { child: idSim, anyStatus: true });
    const env: Record<string, string> = {
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      PORT: String(apiPort),
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: prefix,
      JWT_SECRET: BENCH_JWT_SECRET,
      // The simulator speaks every dialect: IDENTITY_DIALECT picks the adapter the service uses.
      IDENTITY_DIALECT: identityDialectFromEnv(),
      IDENTITY_BASE_URL: identityUrl,
      IDENTITY_API_KEY: BENCH_IDENTITY_KEY,
      IDENTITY_APP_ID: BENCH_IDENTITY_APP_ID,
      PAYSTACK_BASE_URL: `http://127.0.0.1:${paymentPort}`,
      PAYSTACK_SECRET_KEY: BENCH_PAYSTACK_SECRET,
      PUBLIC_BASE_URL: apiUrl,
      SANDBOX_SEED: 'false',
      WORKER_METRICS_PORT: '0',
      WEB_PROCESSES: String(o.apiProcesses),
      METRICS_TOKEN: BENCH_METRICS_TOKEN,
      // The scenarios measure the authority's share, not the request limiter's 429s.
      RATE_LIMIT_PER_TOKEN: '100000000',
      RATE_LIMIT_PER_ORG: '100000000',
      ...o.env,
    };
    for (let i = 0; i < o.apiProcesses; i++) children.push(spawnNode(`api-${i + 1}`, repoPath('src/server.ts'), env));
    await waitForHttp(`${apiUrl}/healthz`, { child: children[2] });
    const startWorker = async () => {
      const w = spawnNode(`worker-${workers.length + 1}`, repoPath('workers/main.ts'), env);
      workers.push(w);
      children.push(w);
      await waitForLookupWorkers(redisUrl, prefix, workers.filter((x) => x.alive).length, w);
      return w;
    };
    for (let i = 0; i < o.workerProcesses; i++) await startWorker();
    db = await createDb(database.url, { maxPoolSize: 4 });
    const pool = db;
    const n = z.object({ n: z.coerce.number() });
    return {
      apiUrl,
      identityUrl,
      prefix,
      redisUrl,
      db: pool,
      workers,
      startWorker,
      sim: simControl(identityUrl),
      async createOrg(c) {
        const org = await createOrganisation(
          pool,
          { name: `Tenant ${randomBytes(3).toString('hex')}`, tenancy: 'hosted', affiliate: false, businessRegistration: 'RC-BENCH', dataProtection: 'NDPC-BENCH' },
          { unitCostKobo: 10000, minTopupUnits: 100 },
        );
        await adjustWallet(pool, org.id, c.units, 'bench funding');
        if (c.maxInFlight !== undefined) await setMaxInFlight(pool, org.id, c.maxInFlight);
        const user = { username: `tenant-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(6).toString('hex')}` };
        await createUser(pool, { orgId: org.id, ...user, role: 'member', requirePasswordChange: false });
        const res = await fetch(`${apiUrl}/v1/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(user).toString(),
        });
        const body = (await res.json()) as { access_token?: string };
        if (!body.access_token) throw new Error(`login failed: ${res.status}`);
        return { orgId: org.id, token: body.access_token };
      },
      async circuitState() {
        const res = await fetch(`${apiUrl}/metrics`, { headers: { authorization: `Bearer ${BENCH_METRICS_TOKEN}` } });
        const m = /^authority_circuit_state(?:\{[^}]*\})? (\d+)/m.exec(await res.text());
        if (!m) throw new Error(`no authority_circuit_state in /metrics (${res.status})`);
        return Number(m[1]);
      },
      async ledger() {
        return {
          debits: await pool.oneFirst(sql.type(n)`SELECT count(*) AS n FROM wallet_transactions WHERE kind = 'verification'`),
          reserved: await pool.oneFirst(sql.type(n)`SELECT coalesce(sum(reserved), 0) AS n FROM wallets`),
          pending: await pool.oneFirst(sql.type(n)`SELECT count(*) AS n FROM verifications WHERE status = 'pending'`),
          duplicateDebits: await pool.oneFirst(sql.type(n)`
            SELECT count(*) AS n FROM (SELECT reference FROM wallet_transactions WHERE kind = 'verification' GROUP BY reference HAVING count(*) > 1) d`),
        };
      },
      async stop() {
        await stopAll();
        await pool.end().catch(() => undefined);
        await database.drop().catch(() => undefined);
        await deleteRedisPrefix(redisUrl, prefix).catch(() => undefined);
      },
    };
  } catch (err) {
    await stopAll();
    await db?.end().catch(() => undefined);
    await database.drop().catch(() => undefined);
    await deleteRedisPrefix(redisUrl, prefix).catch(() => undefined);
    throw err;
  }
}

/** BullMQ names each worker connection in Redis: wait until `count` processes serve the lookups queue. */
async function waitForLookupWorkers(redisUrl: string, prefix: string, count: number, child: NodeChild): Promise<void> {
  const { Queue } = await import('bullmq');
  const redis = new Redis(connectionString(redisUrl), { maxRetriesPerRequest: 2 });
  const q = new Queue(QUEUES.lookups, { connection: redis, prefix: queuePrefix(prefix, QUEUES.lookups) });
  try {
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(100)) {
      if (!child.alive) throw new Error(`worker exited while starting:\n${child.logs.slice(-20).join('\n')}`);
      if ((await q.getWorkersCount()) >= count) return;
    }
    throw new Error('workers not ready in 60 s');
  } finally {
    await q.close();
    redis.disconnect();
  }
}
