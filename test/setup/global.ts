import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrate } from '../../src/lib/migrate.ts';
import { Redis } from 'ioredis';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
    redisUrl: string;
    runId: string;
  }
}

/**
 * One test run = one template database (migrated once) and one Redis key prefix. Each test file
 * clones its own database from the template (see harness.ts). The local PostgreSQL and Redis are
 * used when DATABASE_URL/REDIS_URL are set or when there is no Docker; otherwise testcontainers.
 */
export default async function setup(project: TestProject) {
  const runId = `t${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  let adminUrl = process.env.DATABASE_URL;
  let redisUrl = process.env.REDIS_URL;
  const stops: (() => Promise<unknown>)[] = [];
  const docker = existsSync('/var/run/docker.sock') || !!process.env.DOCKER_HOST;
  if ((!adminUrl || !redisUrl) && docker) {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const { RedisContainer } = await import('@testcontainers/redis');
    if (!adminUrl) {
      const c = await new PostgreSqlContainer('postgres:15').withUsername('postgres').withPassword('postgres').start();
      adminUrl = c.getConnectionUri();
      stops.push(() => c.stop());
    }
    if (!redisUrl) {
      const c = await new RedisContainer('redis:7').start();
      redisUrl = c.getConnectionUrl();
      stops.push(() => c.stop());
    }
  }
  adminUrl ??= 'postgres://postgres@127.0.0.1:5432/postgres';
  redisUrl ??= 'redis://127.0.0.1:6379';

  const template = `${runId}_tpl`;
  const admin = new pg.Client({ connectionString: withDb(adminUrl, 'postgres') });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${template}"`);
  await migrate(withDb(adminUrl, template));

  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('templateDatabase', template);
  project.provide('redisUrl', redisUrl);
  project.provide('runId', runId);

  return async () => {
    const dbs = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${runId}%`]);
    for (const { datname } of dbs.rows) {
      await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
    await admin.end();
    const redis = new Redis(redisUrl);
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${runId}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
    redis.disconnect();
    for (const stop of stops) await stop();
  };
}

export function withDb(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}
