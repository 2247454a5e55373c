import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadSpec } from '../load.ts';
import { load, tmp, type Measured, type RunOptions } from '../lib/measure.ts';
import { spawnProbed } from '../lib/probe.ts';
import { freePort, repoPath, spawnNode, waitForHttp } from '../lib/proc.ts';
import { deleteRedisPrefix, type BenchStack } from '../lib/stack.ts';

/**
 * The machine's ceilings, measured in the same run as the service: an express 5 hello-world route
 * in a process of its own (the most any route can serve here), and a BullMQ no-op round trip.
 */
export async function measureHello(o: RunOptions, connections: number): Promise<Measured> {
  const port = await freePort();
  const child = spawnNode('hello', repoPath('bench/ceilings/hello.ts'), { PORT: String(port) });
  try {
    const url = `http://127.0.0.1:${port}`;
    await waitForHttp(`${url}/hello`, { child });
    return await load({ url, method: 'GET', path: '/hello', headers: {}, connections, durationS: o.durationS, warmupS: o.warmupS }, () => ({ hello: child.pid }));
  } finally {
    await child.stop();
  }
}

export type NoopResult = { callers: number; lost: number; roundTrips: number; throughput: number; p50: number; p99: number };

/** 200 callers adding a job and waiting for it, a no-op worker of concurrency 50 in another process. */
export async function measureBullmqNoop(o: RunOptions): Promise<NoopResult> {
  const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = `idvbench-noop-${randomBytes(4).toString('hex')}`;
  const env = { REDIS_URL: redisUrl, PREFIX: prefix, CALLERS: '200', CONCURRENCY: '50', DURATION_S: String(o.durationS), WARMUP_S: String(o.warmupS) };
  const entry = repoPath('bench/ceilings/bullmq-noop.ts');
  const worker = spawnNode('noop-worker', entry, env, { args: ['worker'], captureLogs: true });
  try {
    for (let i = 0; i < 300 && !worker.logs.includes('ready'); i++) {
      if (!worker.alive) throw new Error(`no-op worker exited:\n${worker.logs.join('\n')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const callers = spawnNode('noop-callers', entry, env, { args: ['callers'], captureLogs: true });
    const { code } = await callers.exited;
    const line = callers.logs.filter((l) => l.startsWith('{')).pop();
    if (code !== 0 || !line) throw new Error(`no-op callers failed (${code}):\n${callers.logs.slice(-20).join('\n')}`);
    return JSON.parse(line) as NoopResult;
  } finally {
    await worker.stop();
    await deleteRedisPrefix(redisUrl, prefix).catch(() => undefined);
  }
}

/** The process name of a floor that also makes the contract's writes (FLOOR_SAME_WRITES). */
export const FLOOR_SAME_WRITES = 'floor_writes';

/**
 * One of the I/O floors (ceilings/requery-floor.ts, ceilings/fixture-floor.ts) in a process of its
 * own, on the service's database and Redis (tables and keys of its own, the same URLs: TCP or
 * sockets alike), with the service's token secret, so the same bearer token and body are sent to
 * both. Measured like the service: CPU per request, event-loop delay and a V8 profile of the floor.
 */
export async function startFloor(
  o: RunOptions,
  kind: 'requery' | 'fixture',
  stack: BenchStack,
  spec: { connections: number; path: string; token: string; body: string; record: unknown },
  opts: { sameWrites?: boolean } = {},
): Promise<{ measure(extra: Partial<LoadSpec>): Promise<Measured>; stop(): Promise<void> }> {
  // The floor with the contract's writes is measured under a name of its own (its CPU, its profile).
  const name = opts.sameWrites ? FLOOR_SAME_WRITES : 'floor';
  const port = await freePort();
  const recordFile = join(tmp, `floor-${kind}-${randomBytes(3).toString('hex')}.json`);
  writeFileSync(recordFile, JSON.stringify(spec.record));
  const probed = spawnProbed(
    name,
    repoPath(`bench/ceilings/${kind}-floor.ts`),
    {
      PORT: String(port),
      DATABASE_URL: stack.env.DATABASE_URL!,
      REDIS_URL: stack.env.REDIS_URL!,
      REDIS_PREFIX: stack.prefix,
      JWT_SECRET: stack.env.JWT_SECRET!,
      POOL_SIZE: stack.env.DATABASE_POOL_SIZE ?? '20',
      RECORD_FILE: recordFile,
      ...(opts.sameWrites ? { FLOOR_SAME_WRITES: '1' } : {}),
    },
    o.profileDir,
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${url}/`, { child: probed.child, anyStatus: true });
  } catch (err) {
    await probed.child.stop();
    throw err;
  }
  const base: LoadSpec = { url, method: 'POST', path: spec.path, headers: { 'content-type': 'application/json', authorization: `Bearer ${spec.token}` }, body: spec.body, connections: spec.connections, durationS: o.durationS, warmupS: o.warmupS };
  return {
    measure: (extra) => load({ ...base, ...extra }, () => ({ [name]: probed.child.pid }), stack.databaseUrl, probed),
    stop: () => probed.child.stop(),
  };
}
