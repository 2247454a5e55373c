import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Express } from 'express';
import pg from 'pg';
import type { DatabasePool } from 'slonik';
import { afterAll, beforeAll, inject } from 'vitest';
import { createApp } from '../../src/server.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { API_DB_CONNECT_TIMEOUT_MS, createDb } from '../../src/lib/db.ts';
import { createHttpServer, LISTEN_BACKLOG } from '../../src/lib/http-server.ts';
import { manualClock, systemClock, type Clock } from '../../src/lib/clock.ts';
import { createLogger, type Logger } from '../../src/lib/logger.ts';
import type { IdentityAuthorityDialect } from '../../src/adapters/identity-authority/index.ts';
import { createApiDeps } from '../../src/wiring.ts';
import { startIdentitySimulator, type IdentitySimulator } from '../../src/simulators/identity-authority/server.ts';
import { startPaymentSimulator, type PaymentSimulator, type WebhookMode } from '../../src/simulators/payment-processor/server.ts';
import { startWorkers, type RunningWorkers } from '../../workers/main.ts';
import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { createOrganisation, createUser, setMaxInFlight } from '../../src/modules/organisations/index.ts';
import { adjustWallet } from '../../src/modules/wallet/index.ts';
import { withDb } from './global.ts';

export type ApiResponse<T = any> = { status: number; body: T; headers: Headers; text: string };

export type ApiCall = {
  token?: string;
  json?: unknown;
  form?: Record<string, string | number>;
  /** Sent as-is (with the given content type) when set. */
  raw?: string;
  contentType?: string;
  headers?: Record<string, string>;
};

export type OrgFixture = {
  orgId: number;
  admin: { username: string; password: string; token: string };
  member: { username: string; password: string; token: string };
};

export type Stack = {
  url: string;
  /** The express application behind `url` (for tests that read its routes). */
  app: Express;
  config: Config;
  db: DatabasePool;
  clock: Clock & { set?(d: Date): void; advance?(ms: number): void };
  identitySim: IdentitySimulator;
  paymentSim: PaymentSimulator;
  workers: RunningWorkers | null;
  logs: string[];
  api<T = any>(method: string, path: string, call?: ApiCall): Promise<ApiResponse<T>>;
  login(username: string, password: string): Promise<string>;
  createOrg(opts?: { units?: number; tenancy?: 'hosted' | 'self-hosted'; affiliate?: boolean; subscription?: boolean; unitCostKobo?: number; minTopupUnits?: number; billingEmail?: string; maxInFlight?: number }): Promise<OrgFixture>;
  /**
   * A user made as the operator's `user:create` makes one (the API adds people by invitation only):
   * its password is temporary, to be changed at first sign-in unless `keepPassword`.
   */
  addUser(orgId: number, o: { role: 'member' | 'finance' | 'org_admin'; username?: string; email?: string; keepPassword?: boolean }): Promise<{ id: number; username: string; password: string }>;
  /** Starts (again) the in-process workers, e.g. after stopping them. */
  startWorkers(): Promise<RunningWorkers>;
  close(): Promise<void>;
};

export type StackOptions = {
  /** Run the BullMQ workers in this process (default true). */
  workers?: boolean;
  /** A manual clock instead of the system clock (API and workers share it). */
  manualClock?: Date;
  env?: Record<string, string>;
  simLatencyMs?: number;
  webhookMode?: WebhookMode;
  /** Keep the log lines in `logs` (for personal-data checks). */
  captureLogs?: boolean;
  /** The adapter the service talks to the identity simulator with (it speaks all three); default sandbox. */
  dialect?: IdentityAuthorityDialect;
  /**
   * Run a face worker too (default false), as its own process like `npm start` and the Procfile run it:
   * it loads the face model (about 500 MB, a second), and its inference would otherwise block this
   * process's event loop (the API's) for half a second at a time. Its log lines join `logs` when captured.
   */
  face?: boolean;
};

/**
 * A test file's own migrated database and a pool on it, made before the file's other hooks run and
 * dropped after them (for tests that need the schema, not a whole stack). Read `db` and `url` in
 * hooks and tests, not at the file's top level.
 */
export function useTestPool(o: { maxPoolSize: number }): { readonly db: DatabasePool; readonly url: string } {
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  let db: DatabasePool | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
    db = await createDb(database.url, { maxPoolSize: o.maxPoolSize });
  });
  afterAll(async () => {
    await db?.end();
    await database?.drop();
  });
  return {
    get db() {
      if (!db) throw new Error('useTestPool: the pool is made in beforeAll');
      return db;
    },
    get url() {
      if (!database) throw new Error('useTestPool: the database is made in beforeAll');
      return database.url;
    },
  };
}

/** The credentials the harness's identity simulator checks, in whichever dialect they come. */
export const TEST_IDENTITY_KEY = 'test-identity-key';
export const TEST_IDENTITY_APP_ID = 'test-identity-app';

let counter = 0;

/** Creates a fresh database for one test file, cloned from the run's migrated template. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = inject('adminDatabaseUrl');
  const name = `${inject('runId')}_${process.pid}_${++counter}_${randomBytes(2).toString('hex')}`;
  const admin = new pg.Client({ connectionString: withDb(adminUrl, 'postgres') });
  await admin.connect();
  for (let attempt = 0; ; attempt++) {
    try {
      await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${inject('templateDatabase')}"`);
      break;
    } catch (err) {
      // Two files cloning the template at the same instant: PostgreSQL refuses one; try again.
      if (attempt > 20 || !/being accessed by other users/.test((err as Error).message)) throw err;
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 200));
    }
  }
  await admin.end();
  return {
    url: withDb(adminUrl, name),
    async drop() {
      const c = new pg.Client({ connectionString: withDb(adminUrl, 'postgres') });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}

export function testConfig(env: Record<string, string>): Config {
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    IDENTITY_BACKOFF_MS: '20',
    IDENTITY_TIMEOUT_MS: '1500',
    VERIFY_WAIT_MS: '8000',
    TOPUP_WAIT_MS: '8000',
    SANDBOX_SEED: 'false',
    ...env,
  });
}

/**
 * `node workers/face.ts` with the test configuration's defaults and `env`; resolves once it says it is
 * ready (its model loaded), and stops with SIGTERM. It settles face matches: the stack's database too.
 */
async function startFaceProcess(env: Record<string, string>, logs: string[] | null): Promise<{ close(): Promise<void> }> {
  const proc = spawn(process.execPath, ['workers/face.ts'], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NODE_ENV: 'test', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const tail: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
      logs?.push(line);
      tail.push(line);
      if (tail.length > 20) tail.shift();
    }
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const redis = new Redis(env.REDIS_URL!);
  try {
    for (let i = 0; (await redis.exists(`${env.REDIS_PREFIX}:face:ready`)) !== 1; i++) {
      if (proc.exitCode !== null || i > 600) throw new Error(`face worker did not become ready: ${tail.join(' | ')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    redis.disconnect();
  }
  return {
    async close() {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}

/** The whole service in this process: API on a random port, workers, both simulators, own DB and Redis prefix. */
export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const database = await createTestDatabase();
  const prefix = `${inject('runId')}-${randomBytes(4).toString('hex')}`;
  const logs: string[] = [];
  const logger: Logger = createLogger({
    level: opts.captureLogs ? 'debug' : 'error',
    destination: opts.captureLogs ? { write: (line: string) => void logs.push(line) } : undefined,
  });
  const identitySim = await startIdentitySimulator({
    host: '127.0.0.1',
    port: 0,
    latencyMs: opts.simLatencyMs ?? 0,
    apiKey: TEST_IDENTITY_KEY,
    appId: TEST_IDENTITY_APP_ID,
    hangMs: 5000,
  });
  const paymentSim = await startPaymentSimulator({ host: '127.0.0.1', port: 0, secretKey: 'sk_test_harness_secret', webhookMode: opts.webhookMode ?? 'normal', webhookRetryMs: 200 });
  const config = testConfig({
    DATABASE_URL: database.url,
    REDIS_URL: inject('redisUrl'),
    REDIS_PREFIX: prefix,
    IDENTITY_DIALECT: opts.dialect ?? 'sandbox',
    IDENTITY_BASE_URL: identitySim.url,
    IDENTITY_API_KEY: TEST_IDENTITY_KEY,
    IDENTITY_APP_ID: TEST_IDENTITY_APP_ID,
    PAYSTACK_BASE_URL: paymentSim.url,
    PAYSTACK_SECRET_KEY: 'sk_test_harness_secret',
    DATABASE_POOL_SIZE: '10',
    ...opts.env,
  });
  const clock = opts.manualClock ? manualClock(opts.manualClock) : systemClock;
  const db = await createDb(config.DATABASE_URL, { maxPoolSize: 10, connectTimeoutMs: API_DB_CONNECT_TIMEOUT_MS });
  const deps = await createApiDeps(config, logger, { clock, db });
  const app = createApp(deps);
  const server: Server = await new Promise((resolve) => {
    const s = createHttpServer(app).listen({ port: 0, host: '127.0.0.1', backlog: LISTEN_BACKLOG }, () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  paymentSim.setWebhookUrl(`${url}/v1/webhooks/paystack`);

  let workers: RunningWorkers | null = null;
  const runWorkers = async () => {
    workers = await startWorkers(config, logger, { clock, schedules: false });
    return workers;
  };
  if (opts.workers !== false) await runWorkers();
  const faceWorker = opts.face ? await startFaceProcess({ REDIS_URL: inject('redisUrl'), REDIS_PREFIX: prefix, DATABASE_URL: database.url, LOG_LEVEL: opts.captureLogs ? 'debug' : 'error', ...opts.env }, opts.captureLogs ? logs : null) : null;

  const api = async <T = any>(method: string, path: string, call: ApiCall = {}): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { ...call.headers };
    let body: string | undefined;
    if (call.token) headers.authorization = `Bearer ${call.token}`;
    if (call.json !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(call.json);
    } else if (call.form !== undefined) {
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
      body = new URLSearchParams(Object.entries(call.form).map(([k, v]) => [k, String(v)] as [string, string])).toString();
    } else if (call.raw !== undefined) {
      if (call.contentType) headers['content-type'] = call.contentType;
      body = call.raw;
    }
    const res = await fetch(`${url}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON: the raw text is the body.
    }
    return { status: res.status, body: parsed as T, headers: res.headers, text };
  };

  const login = async (username: string, password: string) => {
    const r = await api('POST', '/v1/login', { form: { username, password } });
    if (r.status !== 200) throw new Error(`login failed: ${r.status} ${r.text}`);
    return r.body.access_token as string;
  };

  return {
    url,
    app,
    config,
    db,
    clock,
    identitySim,
    paymentSim,
    get workers() {
      return workers;
    },
    logs,
    api,
    login,
    startWorkers: runWorkers,
    async createOrg(o = {}) {
      const org = await createOrganisation(
        db,
        {
          name: `Org ${randomBytes(3).toString('hex')}`,
          tenancy: o.tenancy ?? 'hosted',
          affiliate: o.affiliate ?? false,
          businessRegistration: 'RC-123456',
          dataProtection: 'NDPC-7890',
          unitCostKobo: o.unitCostKobo,
          minTopupUnits: o.minTopupUnits,
          billingEmail: o.billingEmail,
        },
        { unitCostKobo: config.DEFAULT_UNIT_COST_KOBO, minTopupUnits: config.DEFAULT_MIN_TOPUP_UNITS },
      );
      if (o.subscription === false) {
        const { setSubscription } = await import('../../src/modules/organisations/organisations.service.ts');
        await setSubscription(db, org.id, false);
      }
      if (o.units) await adjustWallet(db, org.id, o.units, 'test funding');
      if (o.maxInFlight !== undefined) await setMaxInFlight(db, org.id, o.maxInFlight);
      const suffix = randomBytes(4).toString('hex');
      const admin = { username: `admin-${suffix}@example.com`, password: `pw-admin-${suffix}` };
      const member = { username: `member-${suffix}`, password: `pw-member-${suffix}` };
      await createUser(db, { orgId: org.id, ...admin, role: 'org_admin', requirePasswordChange: false });
      await createUser(db, { orgId: org.id, ...member, role: 'member', requirePasswordChange: false });
      return {
        orgId: org.id,
        admin: { ...admin, token: await login(admin.username, admin.password) },
        member: { ...member, token: await login(member.username, member.password) },
      };
    },
    async addUser(orgId, o) {
      const username = o.username ?? `user-${randomBytes(4).toString('hex')}`;
      const password = randomBytes(12).toString('base64url');
      const user = await createUser(db, { orgId, username, password, role: o.role, email: o.email ?? `${username}@example.com`, requirePasswordChange: o.keepPassword !== true });
      return { id: Number(user.id), username: user.username, password };
    },
    async close() {
      await (workers as RunningWorkers | null)?.close();
      await faceWorker?.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await deps.close();
      await db.end();
      await identitySim.close();
      await paymentSim.close();
      await database.drop();
    },
  };
}
