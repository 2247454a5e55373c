import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/server.ts';
import { createDb, type DatabasePool } from '../../src/lib/db.ts';
import { createHttpServer } from '../../src/lib/http-server.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { createOrganisation, createUser } from '../../src/modules/organisations/index.ts';
import { adjustWallet } from '../../src/modules/wallet/index.ts';
import { createApiDeps } from '../../src/wiring.ts';
import { createTestDatabase, testConfig } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

// PostgreSQL and Redis on the API's machine, reached through their Unix-domain sockets: DATABASE_URL
// in libpq's socket form and REDIS_URL `unix://`. The Redis is a redis-server of this test's own
// with no TCP port at all, so anything that works went through the socket.
const PG_SOCKET_DIR = '/var/run/postgresql';
const present = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0 && existsSync(join(PG_SOCKET_DIR, '.s.PGSQL.5432'));

describe.skipIf(!present)('PostgreSQL and Redis over Unix-domain sockets', () => {
  let dir: string;
  let redisServer: ChildProcess;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let db: DatabasePool;
  let server: Server;
  let close: () => Promise<void>;
  let url: string;
  let socket: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'idv-sockets-'));
    socket = join(dir, 'redis.sock');
    redisServer = spawn('redis-server', ['--port', '0', '--unixsocket', socket, '--unixsocketperm', '700', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
    await waitFor(() => existsSync(socket), { what: 'redis-server socket' });
    database = await createTestDatabase();
    const name = new URL(database.url).pathname.slice(1);
    const config = testConfig({
      DATABASE_URL: `postgres://postgres@/${name}?host=${PG_SOCKET_DIR}`,
      REDIS_URL: `unix://${socket}`,
      REDIS_PREFIX: 'sockets',
    });
    db = await createDb(config.DATABASE_URL, { maxPoolSize: 4 });
    const deps = await createApiDeps(config, createLogger({ level: 'error' }), { db });
    server = await new Promise((resolve) => {
      const s = createHttpServer(createApp(deps)).listen(0, '127.0.0.1', () => resolve(s));
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await deps.close();
    };
  }, 60_000);

  afterAll(async () => {
    await close?.();
    await db?.end();
    await database?.drop();
    redisServer?.kill('SIGTERM');
    if (redisServer && redisServer.exitCode === null) await new Promise((r) => redisServer.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('When DATABASE_URL names the socket directory and REDIS_URL is unix://, then sign-in, a fixture verification and its requery work, over the sockets', async () => {
    expect(await db.oneFirst(sql.type(z.object({ tcp: z.boolean() }))`SELECT inet_server_addr() IS NOT NULL AS tcp`)).toBe(false);
    const org = await createOrganisation(db, { name: 'Sockets', tenancy: 'hosted', affiliate: false, businessRegistration: 'RC-1', dataProtection: 'NDPC-1' }, { unitCostKobo: 10000, minTopupUnits: 100 });
    await adjustWallet(db, org.id, 5, 'test funding');
    await createUser(db, { orgId: org.id, username: 'sockets-member', password: 'sockets-password-1', role: 'member', requirePasswordChange: false });
    const login = await fetch(`${url}/v1/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'username=sockets-member&password=sockets-password-1' });
    expect(login.status).toBe(200);
    const token = ((await login.json()) as { access_token: string }).access_token;
    const post = (path: string, body: unknown) => fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
    const made = await post('/v1/verify-nin', { nin: '12345678901', reason: 'corporate' });
    expect(made.status).toBe(200);
    const ref = ((await made.json()) as { data: { reference_id: string } }).data.reference_id;
    const again = await post('/v1/verify-nin/requery', { reference_id: ref });
    expect(again.status).toBe(200);
    expect(((await again.json()) as { data: { reference_id: string } }).data.reference_id).toBe(ref);
    // The rate-limit windows of this token live in the socket-only Redis.
    const redis = new Redis(socket);
    try {
      expect((await redis.keys('sockets:rl:token:*')).length).toBe(1);
    } finally {
      redis.disconnect();
    }
  });
});
