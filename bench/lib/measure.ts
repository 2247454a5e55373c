import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { LoadResult, LoadSpec } from '../load.ts';
import { summariseProfile } from './cpuprofile.ts';
import { PgWaitSampler } from './pg-waits.ts';
import { MemorySampler, procCpuMs, repoPath, spawnNode } from './proc.ts';
import { adminDatabaseUrl, startBenchStack, type BenchStack, type BenchStackOptions } from './stack.ts';
import { connectionString } from '../../src/lib/redis.ts';

/** What every scenario is given by bench/run.ts. */
export type RunOptions = { durationS: number; warmupS: number; profileDir?: string };

/** One load run against one system, with what was sampled while it ran. */
export type Measured = {
  connections: number;
  result: LoadResult;
  rssMb: Record<string, number>;
  /** CPU milliseconds per answered request, per process (Redis server included), over the whole run. */
  cpuMsPerRequest?: Record<string, number>;
  pgWaits?: Record<string, number>;
  loopLagMs?: Record<string, { p50: number; p99: number; max: number; mean: number } | null>;
  /** V8 CPU profile of each service process over this run (warm-up included), summarised. */
  profiles?: Record<string, ReturnType<typeof summariseProfile>>;
};

export const tmp = mkdtempSync(join(tmpdir(), 'idv-bench-'));
export const removeTmp = () => rmSync(tmp, { recursive: true, force: true });

let redisPid: number | null = null;

/** Runs bench/load.ts in its own process against `spec`, sampling memory, CPU, row locks and loop delay. */
/** Whatever answers SIGUSR2 probes for its processes: the service's stack, or a floor (lib/probe.ts). */
export type Probed = Pick<BenchStack, 'loopLag'>;

export async function load(spec: LoadSpec, procs: () => Record<string, number>, databaseUrl?: string, stack?: Probed): Promise<Measured> {
  const waits = databaseUrl ? await new PgWaitSampler(databaseUrl).start() : null;
  // Resets the loop-delay histograms and starts each process's profile of this run (the one before is dropped).
  if (stack) for (const v of Object.values(await stack.loopLag())) if ((v as { profile?: string } | null)?.profile) rmSync((v as { profile: string }).profile, { force: true });
  const file = join(tmp, `spec-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(spec));
  const loader = spawnNode('loader', repoPath('bench/load.ts'), {}, { args: [file], captureLogs: true });
  const sampler = new MemorySampler(() => ({ ...procs(), loader: loader.pid })).start(250);
  const watched = { ...procs(), ...(redisPid ? { 'redis-server': redisPid } : {}) };
  const cpu0 = Object.fromEntries(Object.entries(watched).map(([n, pid]) => [n, procCpuMs(pid)]));
  const { code } = await loader.exited;
  const cpu1 = Object.fromEntries(Object.entries(watched).map(([n, pid]) => [n, procCpuMs(pid)]));
  const rssMb = sampler.stop();
  const line = loader.logs.filter((l) => l.startsWith('{')).pop();
  if (code !== 0 || !line) throw new Error(`load generator failed (${code}):\n${loader.logs.slice(-20).join('\n')}`);
  const probes = stack ? await stack.loopLag() : undefined;
  const loopLagMs: Measured['loopLagMs'] = {};
  const runProfiles: NonNullable<Measured['profiles']> = {};
  for (const [name, v] of Object.entries(probes ?? {})) {
    const { profile, ...lag } = (v ?? {}) as { profile?: string; p50: number; p99: number; max: number; mean: number };
    loopLagMs[name] = v ? lag : null;
    if (profile) {
      runProfiles[name] = summariseProfile(profile);
      if (process.env.BENCH_KEEP_PROFILES) writeFileSync(`${process.env.BENCH_KEEP_PROFILES}/${name}-${Date.now()}.json`, JSON.stringify(summariseProfile(profile, 40)));
      rmSync(profile, { force: true });
    }
  }
  const result = JSON.parse(line) as LoadResult;
  // Warm-up requests are not in result.requests but their CPU is counted: scale by the share of time measured.
  const share = spec.warmupS ? result.durationS / (result.durationS + spec.warmupS) : 1;
  const per = (ms: number) => Math.round((ms * share * 100) / Math.max(1, result.requests)) / 100;
  const cpuMsPerRequest: Record<string, number> = {};
  for (const [n, before] of Object.entries(cpu0)) {
    const after = cpu1[n];
    if (before !== null && before !== undefined && after !== null && after !== undefined) cpuMsPerRequest[n] = per(after - before);
  }
  return {
    connections: spec.connections,
    result,
    rssMb,
    cpuMsPerRequest,
    ...(waits ? { pgWaits: await waits.stop() } : {}),
    ...(probes ? { loopLagMs } : {}),
    ...(Object.keys(runProfiles).length ? { profiles: runProfiles } : {}),
  };
}

/** Starts the service (profiled under `label` when asked), runs `fn`, always stops it. */
export async function withStack<T>(o: RunOptions, label: string, opts: BenchStackOptions, fn: (s: BenchStack) => Promise<T>): Promise<T> {
  const stack = await startBenchStack({ ...opts, label, ...(o.profileDir ? { cpuProfileDir: o.profileDir } : {}) });
  try {
    return await fn(stack);
  } finally {
    await stack.stop();
  }
}

/** The service's processes to sample (whichever of them this stack runs). */
export const serviceProcs = (s: BenchStack) => () => {
  const p = s.pids();
  return Object.fromEntries(['api', 'worker', 'identity-sim', 'payment-sim'].filter((n) => p[n] !== undefined).map((n) => [n, p[n]!]));
};

export async function machine(): Promise<Record<string, string>> {
  const cpu = readFileSync('/proc/cpuinfo', 'utf8');
  const model = /model name\s*:\s*(.+)/.exec(cpu)?.[1]?.trim() ?? 'unknown';
  const c = new pg.Client({ connectionString: adminDatabaseUrl() });
  await c.connect();
  const pgVersion = (await c.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '?';
  await c.end();
  const redis = new Redis(connectionString(process.env.BENCH_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'), { maxRetriesPerRequest: 2 });
  const info = await redis.info('server');
  redis.disconnect();
  const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
  redisPid = Number.isInteger(pid) && procCpuMs(pid) !== null ? pid : null;
  return {
    nproc: String(availableParallelism()),
    cpu: model,
    memory: `${Math.round(totalmem() / 1024 ** 3)} GiB`,
    node: process.version,
    postgresql: pgVersion,
    redis: /redis_version:(\S+)/.exec(info)?.[1] ?? '?',
    date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
  };
}

export type MachineLoad = { loadStart: number; loadEnd: number; busyPct: number; stealPct: number };

function cpuTimes(): { total: number; idle: number; steal: number } {
  const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { total, idle: (f[3] ?? 0) + (f[4] ?? 0), steal: f[7] ?? 0 };
}

/** Machine contention while `run` ran: 1-minute load average and the CPU's busy and steal shares. */
export async function underLoad<T>(run: () => Promise<T>): Promise<{ value: T; machineLoad: MachineLoad }> {
  const load0 = loadavg()[0]!;
  const c0 = cpuTimes();
  const value = await run();
  const c1 = cpuTimes();
  const dt = Math.max(1, c1.total - c0.total);
  return {
    value,
    machineLoad: {
      loadStart: Math.round(load0 * 100) / 100,
      loadEnd: Math.round(loadavg()[0]! * 100) / 100,
      busyPct: Math.round((1 - (c1.idle - c0.idle) / dt) * 1000) / 10,
      stealPct: Math.round(((c1.steal - c0.steal) / dt) * 1000) / 10,
    },
  };
}

/** POST /v1/verify-nin as `token`, `connections` at once, for the run's duration after its warm-up. */
export function verifySpec(o: RunOptions, url: string, token: string, connections: number, extra: Partial<LoadSpec>): LoadSpec {
  return {
    url,
    method: 'POST',
    path: '/v1/verify-nin',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    connections,
    durationS: o.durationS,
    warmupS: o.warmupS,
    ...extra,
  };
}
