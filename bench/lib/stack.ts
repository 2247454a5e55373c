import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { DatabasePool } from 'slonik';
import { createDb } from '../../src/lib/db.ts';
import { migrate } from '../../src/lib/migrate.ts';
import { createOrganisation, createUser } from '../../src/modules/organisations/organisations.service.ts';
import { adjustWallet } from '../../src/modules/wallet/index.ts';
import { BENCH_IDENTITY_APP_ID, identityDialectFromEnv } from './dialect.ts';
import { freePort, repoPath, sleep, spawnNode, waitForHttp, type NodeChild } from './proc.ts';
import { jobTimings, settleQueues, waitForWorkers, type JobTimings } from './queues.ts';
import { connectionString } from '../../src/lib/redis.ts';
import { socketAwareDatabaseUrl } from '../../src/lib/database-url.ts';

export { waitForWorkers, type JobTimings };

/**
 * The real service as the Procfile runs it: API and workers as separate `node` processes, both
 * simulators as processes too, on a database and a Redis prefix of its own.
 */
export type BenchStack = {
  apiUrl: string;
  identityUrl: string;
  paymentUrl: string;
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
  env: Record<string, string>;
  db: DatabasePool;
  children: Record<string, NodeChild>;
  pids(): Record<string, number>;
  /** Event-loop delay (ms) of the API and worker since the previous call (the first call resets). */
  loopLag(): Promise<Record<string, unknown>>;
  createOrg(o?: { units?: number; name?: string }): Promise<{ orgId: number; admin: Account; member: Account }>;
  login(username: string, password: string): Promise<string>;
  /** Queue wait and run time of the last completed jobs of a queue (ms percentiles). */
  jobTimings(queue: string, since?: number): Promise<JobTimings>;
  /** Polls until no job of the lookups/credits queues is waiting, active or delayed. */
  settleQueues(timeoutMs?: number): Promise<Record<string, number>>;
  stop(): Promise<void>;
};

export type Account = { username: string; password: string; token: string };

export const BENCH_JWT_SECRET = 'bench-only-jwt-secret-0123456789abcdefghijklmnop';
export const BENCH_PAYSTACK_SECRET = 'sk_test_bench_secret';
export const BENCH_IDENTITY_KEY = 'bench-identity-key';

export function adminDatabaseUrl(): string {
  return socketAwareDatabaseUrl(process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
}

export function withDb(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

export async function createBenchDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const admin = adminDatabaseUrl();
  const name = `idv_bench_${randomBytes(5).toString('hex')}`;
  const c = new pg.Client({ connectionString: withDb(admin, 'postgres') });
  await c.connect();
  await c.query(`CREATE DATABASE "${name}"`);
  await c.end();
  const url = withDb(admin, name);
  await migrate(url);
  return {
    url,
    name,
    async drop() {
      const d = new pg.Client({ connectionString: withDb(admin, 'postgres') });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await d.end();
    },
  };
}

export async function deleteRedisPrefix(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(connectionString(redisUrl), { maxRetriesPerRequest: 2 });
  try {
    let cursor = '0';
    for (let i = 0; i < 100_000; i++) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
      if (cursor === '0') break;
    }
  } finally {
    redis.disconnect();
  }
}

export type BenchStackOptions = {
  simLatencyMs?: number;
  webhookMode?: 'normal' | 'twice' | 'late' | 'out-of-order' | 'none' | 'bad-signature';
  /** Extra environment for the API and worker processes (tuning knobs). */
  env?: Record<string, string>;
  workers?: boolean;
  /** Also run FACE_PROCESSES (env, default 1) face worker processes (workers/face.ts), waited for until /readyz says face: ready. */
  face?: boolean;
  /** Write V8 CPU profiles of the API and worker processes into this directory, one per load run (lib/loop-lag.ts). */
  cpuProfileDir?: string;
  /** Profiles are named `<label>-api-<n>.cpuprofile`, `<label>-worker-<n>.cpuprofile`. */
  label?: string;
};

export async function startBenchStack(o: BenchStackOptions = {}): Promise<BenchStack> {
  const database = await createBenchDatabase();
  const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = `idvbench-${randomBytes(4).toString('hex')}`;
  const children: Record<string, NodeChild> = {};
  const lagFiles: Record<string, string> = {};
  const stopAll = async () => {
    // Workers first (they drain), then the API, then the simulators.
    for (const name of Object.keys(children).filter((n) => n.startsWith('face-'))) await children[name]?.stop(8000);
    for (const name of ['worker', 'api', 'identity-sim', 'payment-sim']) await children[name]?.stop(8000);
  };
  let db: DatabasePool | undefined;
  try {
    const [identityPort, paymentPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    const identityUrl = `http://127.0.0.1:${identityPort}`;
    const paymentUrl = `http://127.0.0.1:${paymentPort}`;
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    children['identity-sim'] = spawnNode('identity-sim', repoPath('src/simulators/identity-authority/main.ts'), {
      PORT: String(identityPort),
      SIM_HOST: '127.0.0.1',
      SIM_LATENCY_MS: String(o.simLatencyMs ?? 0),
      SIM_API_KEY: BENCH_IDENTITY_KEY,
      SIM_APP_ID: BENCH_IDENTITY_APP_ID,
    });
    children['payment-sim'] = spawnNode('payment-sim', repoPath('src/simulators/payment-processor/main.ts'), {
      PORT: String(paymentPort),
      SIM_HOST: '127.0.0.1',
      PAYSTACK_SECRET_KEY: BENCH_PAYSTACK_SECRET,
      SIM_WEBHOOK_URL: `${apiUrl}/v1/webhooks/paystack`,
      SIM_WEBHOOK_MODE: o.webhookMode ?? 'normal',
      SIM_WEBHOOK_RETRY_MS: '500',
    });
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
      PAYSTACK_BASE_URL: paymentUrl,
      PAYSTACK_SECRET_KEY: BENCH_PAYSTACK_SECRET,
      PUBLIC_BASE_URL: apiUrl,
      SANDBOX_SEED: 'false',
      WORKER_METRICS_PORT: '0',
      // The benchmark measures the request path, not the limiter's 429s.
      RATE_LIMIT_PER_TOKEN: '100000000',
      RATE_LIMIT_PER_ORG: '100000000',
      ...o.env,
    };
    await Promise.all([
      waitForHttp(`${identityUrl}/v1/reasons`, { child: children['identity-sim'], anyStatus: true }),
      waitForHttp(`${paymentUrl}/__sim/deliveries`, { child: children['payment-sim'], anyStatus: true }),
    ]);
    // Every service process gets the event-loop delay probe; profiles only when asked.
    const lagDir = mkdtempSync(join(tmpdir(), 'idv-lag-'));
    const nodeArgs = ['--import', repoPath('bench/lib/loop-lag.ts')];
    const probe = (name: string) => ({
      BENCH_LOOP_LAG_FILE: lagFiles[name]!,
      ...(o.cpuProfileDir ? { BENCH_PROFILE_DIR: o.cpuProfileDir, BENCH_PROFILE_NAME: `${o.label ? `${o.label}-` : ''}${name}` } : {}),
    });
    lagFiles.api = join(lagDir, 'api.jsonl');
    lagFiles.worker = join(lagDir, 'worker.jsonl');
    children.api = spawnNode('api', repoPath('src/server.ts'), { ...env, ...probe('api') }, { nodeArgs });
    if (o.workers !== false) children.worker = spawnNode('worker', repoPath('workers/main.ts'), { ...env, ...probe('worker') }, { nodeArgs });
    await waitForHttp(`${apiUrl}/healthz`, { child: children.api });
    if (o.workers !== false) await waitForWorkers(redisUrl, prefix, children.worker!);
    if (o.face) {
      const n = Number(env.FACE_PROCESSES ?? '1');
      for (let i = 1; i <= n; i++) children[`face-${i}`] = spawnNode(`face-${i}`, repoPath('workers/face.ts'), env);
      for (let i = 0; ; i++) {
        const r = (await (await fetch(`${apiUrl}/readyz`)).json()) as { face?: string };
        if (r.face === 'ready') break;
        if (i > 600) throw new Error('no face worker became ready within 60 s');
        await sleep(100);
      }
    }
    db = await createDb(database.url, { maxPoolSize: 4 });
    const pool = db;

    const login = async (username: string, password: string) => {
      const res = await fetch(`${apiUrl}/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ username, password }).toString(),
      });
      const body = (await res.json()) as { access_token?: string };
      if (res.status !== 200 || !body.access_token) throw new Error(`login failed: ${res.status}`);
      return body.access_token;
    };

    return {
      apiUrl,
      identityUrl,
      paymentUrl,
      databaseUrl: database.url,
      redisUrl,
      prefix,
      env,
      db: pool,
      children,
      async loopLag() {
        const out: Record<string, unknown> = {};
        for (const name of ['api', 'worker']) {
          const c = children[name];
          if (!c?.alive) continue;
          const before = existsSync(lagFiles[name]!) ? readFileSync(lagFiles[name]!, 'utf8').length : 0;
          c.proc.kill('SIGUSR2');
          for (let i = 0; i < 250; i++) {
            if (existsSync(lagFiles[name]!) && readFileSync(lagFiles[name]!, 'utf8').length > before) break;
            await sleep(20);
          }
          const lines = existsSync(lagFiles[name]!) ? readFileSync(lagFiles[name]!, 'utf8').trim().split('\n') : [];
          out[name] = lines.length ? JSON.parse(lines.at(-1)!) : null;
        }
        return out;
      },
      pids: () => Object.fromEntries(Object.entries(children).filter(([, c]) => c.alive).map(([n, c]) => [n, c.pid])),
      async createOrg(opts = {}) {
        const org = await createOrganisation(
          pool,
          { name: opts.name ?? `Bench ${randomBytes(3).toString('hex')}`, tenancy: 'hosted', affiliate: false, businessRegistration: 'RC-BENCH', dataProtection: 'NDPC-BENCH' },
          { unitCostKobo: 10000, minTopupUnits: 100 },
        );
        if (opts.units) await adjustWallet(pool, org.id, opts.units, 'bench funding');
        const suffix = randomBytes(4).toString('hex');
        const admin = { username: `bench-admin-${suffix}@example.com`, password: `pw-${suffix}-admin` };
        const member = { username: `bench-member-${suffix}`, password: `pw-${suffix}-member` };
        await createUser(pool, { orgId: org.id, ...admin, role: 'org_admin', requirePasswordChange: false });
        await createUser(pool, { orgId: org.id, ...member, role: 'member', requirePasswordChange: false });
        return {
          orgId: org.id,
          admin: { ...admin, token: await login(admin.username, admin.password) },
          member: { ...member, token: await login(member.username, member.password) },
        };
      },
      login,
      jobTimings: (queue, since) => jobTimings(redisUrl, prefix, queue, since),
      async settleQueues(timeoutMs = 60_000) {
        return settleQueues(redisUrl, prefix, timeoutMs);
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
