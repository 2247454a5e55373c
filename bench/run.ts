import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { sql } from 'slonik';
import { z } from 'zod';
import { signPaystackBody } from '../src/adapters/payment-processor/signature.ts';
import type { LoadResult, LoadSpec } from './load.ts';
import { freePort, MemorySampler, procCpuMs, repoPath, sleep, spawnNode, waitForHttp, type NodeChild } from './lib/proc.ts';
import { summariseProfile } from './lib/cpuprofile.ts';
import { PgWaitSampler } from './lib/pg-waits.ts';
import { adminDatabaseUrl, BENCH_JWT_SECRET, BENCH_PAYSTACK_SECRET, BENCH_IDENTITY_KEY, startBenchStack, type BenchStack } from './lib/stack.ts';

/**
 * `npm run bench`: each scenario starts the real service (API and workers as separate processes),
 * drives it over HTTP from a separate autocannon process, prints one JSON line and, at the end,
 * writes bench/RESULTS.md. `npm run bench -- --soak [--soak-seconds N]` runs only the memory soak.
 * Options: --only 1,2,3,4   --duration S (default 12)   --warmup S (default 3)
 *          --profile (V8 CPU profiles of the API and worker, summarised into RESULTS.md).
 */

const args = parseArgs({
  options: {
    soak: { type: 'boolean', default: false },
    'soak-seconds': { type: 'string', default: '300' },
    only: { type: 'string' },
    duration: { type: 'string', default: '12' },
    warmup: { type: 'string', default: '3' },
    profile: { type: 'boolean', default: false },
  },
  allowPositionals: false,
}).values;

const DURATION = Number(args.duration);
const WARMUP = Number(args.warmup);
const UPSTREAM_LATENCY_MS = 50;
// Light loads for the latency targets: few connections, so requests do not queue behind each other.
// (autocannon's rate option sends each second's requests in one burst, so it is not used.)
const LIGHT_CONNECTIONS = Number(process.env.BENCH_LIGHT_CONNECTIONS ?? 10);
const REQUERY_LIGHT_CONNECTIONS = Number(process.env.BENCH_REQUERY_LIGHT_CONNECTIONS ?? 2);
// Tuning of the service for this machine (bench/analysis.md says how it was chosen); the service's
// defaults are used for everything else.
// BENCH_SVC_<NAME>=value in the environment overrides or adds a service variable (experiments).
const SERVICE_TUNING: Record<string, string> = {
  LOOKUP_CONCURRENCY: '64',
  ...Object.fromEntries(
    Object.entries(process.env)
      .filter(([k, v]) => k.startsWith('BENCH_SVC_') && v !== undefined)
      .map(([k, v]) => [k.slice('BENCH_SVC_'.length), v!]),
  ),
};

type Measured = {
  connections: number;
  result: LoadResult;
  rssMb: Record<string, number>;
  /** CPU milliseconds per answered request, per process (Redis server included), over the whole run. */
  cpuMsPerRequest?: Record<string, number>;
  pgWaits?: Record<string, number>;
  loopLagMs?: Record<string, unknown>;
};

let redisPid: number | null = null;

type ScenarioReport = {
  /** Machine contention while the scenario ran: 1-minute load average and CPU steal/busy shares. */
  machineLoad?: { loadStart: number; loadEnd: number; busyPct: number; stealPct: number; ownPct?: number };
  scenario: string;
  title: string;
  ours: Measured;
  baseline?: Measured;
  ratios?: { throughput: number; p99DeltaMs: number };
  targets: { name: string; pass: boolean; value: string }[];
  checks?: Record<string, unknown>;
};

const tmp = mkdtempSync(join(tmpdir(), 'idv-bench-'));

async function load(spec: LoadSpec, sampled: () => Record<string, number>, databaseUrl?: string, stack?: BenchStack): Promise<Measured> {
  const waits = databaseUrl ? await new PgWaitSampler(databaseUrl).start() : null;
  if (stack) await stack.loopLag();
  const file = join(tmp, `spec-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(spec));
  const loader = spawnNode('loader', repoPath('bench/load.ts'), {}, { args: [file], captureLogs: true });
  const sampler = new MemorySampler(() => ({ ...sampled(), loader: loader.pid })).start(250);
  const watched = { ...sampled(), ...(redisPid ? { 'redis-server': redisPid } : {}) };
  const cpu0 = Object.fromEntries(Object.entries(watched).map(([n, pid]) => [n, procCpuMs(pid)]));
  let loaderCpu = 0;
  const cpuTimer = setInterval(() => (loaderCpu = procCpuMs(loader.pid) ?? loaderCpu), 200);
  const { code } = await loader.exited;
  clearInterval(cpuTimer);
  const cpu1 = Object.fromEntries(Object.entries(watched).map(([n, pid]) => [n, procCpuMs(pid)]));
  const rssMb = sampler.stop();
  const line = loader.logs.filter((l) => l.startsWith('{')).pop();
  if (code !== 0 || !line) throw new Error(`load generator failed (${code}):\n${loader.logs.slice(-20).join('\n')}`);
  const loopLagMs = stack ? await stack.loopLag() : undefined;
  const result = JSON.parse(line) as LoadResult;
  // Warm-up requests are not in result.requests but their CPU is counted: scale by the share of time measured.
  const share = spec.warmupS ? result.durationS / (result.durationS + spec.warmupS) : 1;
  const per = (ms: number) => Math.round((ms * share * 100) / Math.max(1, result.requests)) / 100;
  const cpuMsPerRequest: Record<string, number> = {};
  for (const [n, before] of Object.entries(cpu0)) {
    const after = cpu1[n];
    if (before !== null && before !== undefined && after !== null && after !== undefined) cpuMsPerRequest[n] = per(after - before);
  }
  cpuMsPerRequest.loader = per(loaderCpu);
  return { connections: spec.connections, result, rssMb, cpuMsPerRequest, ...(waits ? { pgWaits: await waits.stop() } : {}), ...(loopLagMs ? { loopLagMs } : {}) };
}

async function startBaseline(stack: BenchStack, mode: 'fixture' | 'live', pattern = 'debit'): Promise<{ url: string; child: NodeChild }> {
  const port = await freePort();
  const child = spawnNode('baseline', repoPath('bench/baseline.ts'), {
    PORT: String(port),
    DATABASE_URL: stack.databaseUrl,
    DATABASE_POOL_SIZE: stack.env.DATABASE_POOL_SIZE ?? '20',
    JWT_SECRET: BENCH_JWT_SECRET,
    JWT_ISSUER: 'idverify',
    BASELINE_MODE: mode,
    BASELINE_PATTERN: pattern,
    IDENTITY_URL: stack.identityUrl,
    IDENTITY_API_KEY: BENCH_IDENTITY_KEY,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/healthz`, { child });
  return { url, child };
}

function ratios(ours: LoadResult, base: LoadResult) {
  return {
    throughput: Math.round((ours.throughput / Math.max(base.throughput, 0.001)) * 100) / 100,
    p99DeltaMs: Math.round((ours.latencyMs.p99 - base.latencyMs.p99) * 10) / 10,
  };
}

function verifySpec(url: string, token: string, connections: number, extra: Partial<LoadSpec>): LoadSpec {
  return {
    url,
    method: 'POST',
    path: '/v1/verify-nin',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    connections,
    durationS: DURATION,
    warmupS: WARMUP,
    ...extra,
  };
}

function comparedTargets(r: { throughput: number; p99DeltaMs: number }) {
  return [
    { name: 'throughput >= 70% of baseline', pass: r.throughput >= 0.7, value: `${Math.round(r.throughput * 100)}%` },
    { name: 'p99 within 10 ms of baseline', pass: r.p99DeltaMs <= 10, value: `${r.p99DeltaMs >= 0 ? '+' : ''}${r.p99DeltaMs} ms` },
  ];
}

let profileDir: string | undefined;

async function withStack<T>(opts: Parameters<typeof startBenchStack>[0], fn: (s: BenchStack) => Promise<T>): Promise<T> {
  const stack = await startBenchStack({ ...opts, ...(profileDir ? { cpuProfileDir: profileDir } : {}) });
  try {
    return await fn(stack);
  } finally {
    await stack.stop();
  }
}

const serviceProcs = (s: BenchStack) => () => {
  const p = s.pids();
  return { api: p.api!, worker: p.worker!, 'identity-sim': p['identity-sim']!, 'payment-sim': p['payment-sim']! };
};

async function scenarioFixture(): Promise<ScenarioReport> {
  return withStack({ env: SERVICE_TUNING }, async (stack) => {
    const connections = 100;
    const ours = await stack.createOrg({ units: 10_000_000 });
    const theirs = await stack.createOrg({ units: 10_000_000 });
    const body = JSON.stringify({ nin: '12345678901', reason: 'corporate' });
    const base = await startBaseline(stack, 'fixture');
    const b = await load(verifySpec(base.url, theirs.member.token, connections, { body }), () => ({ baseline: base.child.pid }), stack.databaseUrl);
    await base.child.stop();
    const o = await load(verifySpec(stack.apiUrl, ours.member.token, connections, { body }), serviceProcs(stack), stack.databaseUrl, stack);
    const r = ratios(o.result, b.result);
    return { scenario: '1', title: 'fixture verifications (POST /v1/verify-nin, 12345678901)', ours: o, baseline: b, ratios: r, targets: comparedTargets(r) };
  });
}

async function scenarioLive(): Promise<ScenarioReport> {
  return withStack({ simLatencyMs: UPSTREAM_LATENCY_MS, env: SERVICE_TUNING }, async (stack) => {
    const connections = 200;
    const ours = await stack.createOrg({ units: 10_000_000 });
    const theirs = await stack.createOrg({ units: 10_000_000 });
    const base = await startBaseline(stack, 'live');
    const b = await load(verifySpec(base.url, theirs.member.token, connections, { bodyKind: 'random-live-nin' }), () => ({ baseline: base.child.pid, 'identity-sim': stack.pids()['identity-sim']! }), stack.databaseUrl);
    // The same work at a light load: the latency the queue adds when little queues up.
    const light = { bodyKind: 'random-live-nin' as const, durationS: Math.max(5, Math.round(DURATION / 2)), warmupS: 1 };
    const bLight = await load(verifySpec(base.url, theirs.member.token, LIGHT_CONNECTIONS, light), () => ({ baseline: base.child.pid }), stack.databaseUrl);
    await base.child.stop();
    // Experiments on the wallet row, no queue: the service's reserve-then-capture pattern as two
    // transactions, then as two single statements (bench/baseline.ts).
    const experiments: Record<string, Measured> = {};
    for (const pattern of ['reserve-capture-tx', 'reserve-capture-stmt']) {
      const exp = await startBaseline(stack, 'live', pattern);
      experiments[pattern] = await load(verifySpec(exp.url, theirs.member.token, connections, { bodyKind: 'random-live-nin', durationS: Math.max(5, Math.round(DURATION * 0.6)), warmupS: 2 }), () => ({ baseline: exp.child.pid }), stack.databaseUrl);
      await exp.child.stop();
    }
    const t0 = Date.now() + WARMUP * 1000;
    const o = await load(verifySpec(stack.apiUrl, ours.member.token, connections, { bodyKind: 'random-live-nin' }), serviceProcs(stack), stack.databaseUrl, stack);
    const jobs = await stack.jobTimings('lookups', t0);
    const t1 = Date.now() + 1000;
    const oLight = await load(verifySpec(stack.apiUrl, ours.member.token, LIGHT_CONNECTIONS, light), serviceProcs(stack), stack.databaseUrl, stack);
    const jobsLight = await stack.jobTimings('lookups', t1);
    await stack.settleQueues(30_000);
    const ledger = await ledgerCheck(stack, ours.orgId);
    const r = ratios(o.result, b.result);
    const added = Math.round((o.result.latencyMs.p99 - UPSTREAM_LATENCY_MS) * 10) / 10;
    const addedLight = Math.round((oLight.result.latencyMs.p99 - UPSTREAM_LATENCY_MS) * 10) / 10;
    return {
      scenario: '2',
      title: `live verifications, upstream ${UPSTREAM_LATENCY_MS} ms, ${connections} connections`,
      ours: o,
      baseline: b,
      ratios: r,
      targets: [
        ...comparedTargets(r),
        { name: `added latency over upstream < 10 ms at p99 (${connections} conns)`, pass: added < 10, value: `${added} ms` },
        { name: `added latency over upstream < 10 ms at p99 (light, ${LIGHT_CONNECTIONS} conns)`, pass: addedLight < 10, value: `${addedLight} ms (baseline ${Math.round((bLight.result.latencyMs.p99 - UPSTREAM_LATENCY_MS) * 10) / 10} ms)` },
        { name: 'ledger: one debit per 200, balance = sum of lines', pass: ledger.ok, value: ledger.ok ? 'ok' : JSON.stringify(ledger) },
      ],
      checks: { light: { ours: oLight, baseline: bLight }, experiments, ledger, jobs, jobsLight },
    };
  });
}

async function ledgerCheck(stack: BenchStack, orgId: number) {
  const row = await stack.db.one(sql.type(z.object({ units: z.coerce.number(), reserved: z.coerce.number(), ledger: z.coerce.number(), debits: z.coerce.number(), found: z.coerce.number() }))`
    SELECT w.units, w.reserved,
      (SELECT COALESCE(sum(units_delta), 0) FROM wallet_transactions t WHERE t.org_id = w.org_id) AS ledger,
      (SELECT count(*) FROM wallet_transactions t WHERE t.org_id = w.org_id AND kind = 'verification') AS debits,
      (SELECT count(*) FROM verifications v WHERE v.org_id = w.org_id AND status = 'found' AND NOT fixture) AS found
    FROM wallets w WHERE w.org_id = ${orgId}`);
  return { ok: row.units === row.ledger && row.debits === row.found && row.reserved === 0, ...row };
}

async function scenarioRequery(): Promise<ScenarioReport> {
  return withStack({ env: SERVICE_TUNING }, async (stack) => {
    const connections = 20;
    const org = await stack.createOrg({ units: 1000 });
    const made = await fetch(`${stack.apiUrl}/v1/verify-nin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.member.token}` },
      body: JSON.stringify({ nin: '23456789012', reason: 'corporate' }),
    });
    if (made.status !== 200) throw new Error(`could not create a verification to requery: ${made.status} ${await made.text()}`);
    const referenceId = await stack.db.oneFirst(
      sql.type(z.object({ reference_id: z.string() }))`SELECT reference_id FROM verifications WHERE org_id = ${org.orgId} AND status = 'found' ORDER BY created_at DESC LIMIT 1`,
    );
    const o = await load(
      { ...verifySpec(stack.apiUrl, org.member.token, connections, { body: JSON.stringify({ reference_id: referenceId }) }), path: '/v1/verify-nin/requery' },
      serviceProcs(stack),
      stack.databaseUrl,
      stack,
    );
    const light = await load(
      { ...verifySpec(stack.apiUrl, org.member.token, REQUERY_LIGHT_CONNECTIONS, { body: JSON.stringify({ reference_id: referenceId }), durationS: Math.max(5, Math.round(DURATION / 2)), warmupS: 1 }), path: '/v1/verify-nin/requery' },
      serviceProcs(stack),
      stack.databaseUrl,
      stack,
    );
    const units = await stack.db.oneFirst(sql.type(z.object({ units: z.coerce.number() }))`SELECT units FROM wallets WHERE org_id = ${org.orgId}`);
    return {
      scenario: '3',
      title: `requery (POST /v1/verify-nin/requery), ${connections} connections`,
      ours: o,
      targets: [
        { name: `requery p99 < 10 ms (light, ${REQUERY_LIGHT_CONNECTIONS} conns)`, pass: light.result.latencyMs.p99 < 10, value: `${light.result.latencyMs.p99} ms` },
        { name: `requery p99 < 10 ms (saturated, ${connections} conns)`, pass: o.result.latencyMs.p99 < 10, value: `${o.result.latencyMs.p99} ms` },
        { name: 'all 200, nothing charged', pass: o.result.non2xx === 0 && light.result.non2xx === 0 && units === 999, value: `non-2xx ${o.result.non2xx + light.result.non2xx}, units ${units}` },
      ],
      checks: { light },
    };
  });
}

async function scenarioWebhookStorm(): Promise<ScenarioReport> {
  return withStack({ webhookMode: 'none', env: SERVICE_TUNING }, async (stack) => {
    const REFERENCES = 200;
    const WEBHOOKS = 1000;
    const connections = 50;
    const org = await stack.createOrg();
    const references: string[] = [];
    for (let i = 0; i < REFERENCES; i++) {
      const res = await fetch(`${stack.apiUrl}/v1/topup/initialize`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${org.admin.token}` },
        body: 'units=100',
      });
      const body = (await res.json()) as { reference?: string };
      if (res.status !== 200 || !body.reference) throw new Error(`topup/initialize failed: ${res.status} ${JSON.stringify(body)}`);
      references.push(body.reference);
    }
    const events: string[][] = [];
    for (const ref of references) {
      const paid = await fetch(`${stack.paymentUrl}/__sim/transactions/${ref}/pay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"webhook":"none"}' });
      if (paid.status !== 200) throw new Error(`simulator pay failed for ${ref}: ${paid.status}`);
      const verified = (await (await fetch(`${stack.paymentUrl}/transaction/verify/${ref}`, { headers: { authorization: `Bearer ${BENCH_PAYSTACK_SECRET}` } })).json()) as { data: unknown };
      const event = { event: 'charge.success', data: verified.data };
      // Five deliveries per reference: three byte-identical retries and two re-serialised copies
      // (same event, other bytes: another digest), as a processor's retries and replays would be.
      const exact = JSON.stringify(event);
      events.push([exact, exact, exact, JSON.stringify(event, null, 1), JSON.stringify({ data: event.data, event: event.event })]);
    }
    const bodies = events.flat().map((body) => ({ body, headers: { 'x-paystack-signature': signPaystackBody(body, BENCH_PAYSTACK_SECRET) } }));
    // A fixed shuffle, so duplicates race each other rather than arrive in a row.
    let seed = 42;
    for (let i = bodies.length - 1; i > 0; i--) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const j = seed % (i + 1);
      [bodies[i], bodies[j]] = [bodies[j]!, bodies[i]!];
    }
    const file = join(tmp, 'webhooks.json');
    writeFileSync(file, JSON.stringify(bodies.slice(0, WEBHOOKS)));
    const o = await load(
      { url: stack.apiUrl, method: 'POST', path: '/v1/webhooks/paystack', headers: { 'content-type': 'application/json' }, connections, amount: WEBHOOKS, bodiesFile: file },
      serviceProcs(stack),
      stack.databaseUrl,
      stack,
    );
    const settleStarted = Date.now();
    const counts = await stack.settleQueues(60_000);
    // Credits finish asynchronously: wait (bounded) until every reference is credited.
    let credited = 0;
    for (let i = 0; i < 150; i++) {
      credited = await stack.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM topups WHERE org_id = ${org.orgId} AND status = 'credited'`);
      if (credited === REFERENCES) break;
      await sleep(200);
    }
    const settleMs = Date.now() - settleStarted;
    const perRef = await stack.db.any(sql.type(z.object({ reference: z.string(), n: z.coerce.number() }))`
      SELECT t.reference, count(w.id) AS n FROM topups t
      LEFT JOIN wallet_transactions w ON w.reference = t.reference AND w.kind = 'topup'
      WHERE t.org_id = ${org.orgId} GROUP BY t.reference`);
    const wrong = perRef.filter((r) => r.n !== 1);
    const units = await stack.db.oneFirst(sql.type(z.object({ units: z.coerce.number() }))`SELECT units FROM wallets WHERE org_id = ${org.orgId}`);
    const exactlyOnce = wrong.length === 0 && perRef.length === REFERENCES && units === REFERENCES * 100;
    return {
      scenario: '4',
      title: `top-up webhook storm: ${WEBHOOKS} signed webhooks for ${REFERENCES} references, ${connections} connections`,
      ours: o,
      targets: [
        { name: 'every paid reference credited exactly once', pass: exactlyOnce, value: `${perRef.length - wrong.length}/${REFERENCES} once, balance ${units}` },
        { name: 'no 5xx, no errors', pass: !Object.keys(o.result.statuses).some((s) => s.startsWith('5')) && o.result.errors === 0, value: JSON.stringify(o.result.statuses) },
      ],
      checks: { credited, settleMs, queues: counts, wrong: wrong.slice(0, 5) },
    };
  });
}

async function soak(seconds: number): Promise<ScenarioReport> {
  return withStack({ simLatencyMs: UPSTREAM_LATENCY_MS, env: SERVICE_TUNING }, async (stack) => {
    const org = await stack.createOrg({ units: 10_000_000 });
    const file = join(tmp, 'soak.json');
    const spec = verifySpec(stack.apiUrl, org.member.token, 50, { bodyKind: 'random-live-nin', durationS: seconds, warmupS: 0 });
    writeFileSync(file, JSON.stringify(spec));
    const loader = spawnNode('loader', repoPath('bench/load.ts'), {}, { args: [file], captureLogs: true });
    const sampler = new MemorySampler(serviceProcs(stack)).start(2000);
    await loader.exited;
    const rssMb = sampler.stop();
    const line = loader.logs.filter((l) => l.startsWith('{')).pop();
    if (!line) throw new Error(`soak load failed:\n${loader.logs.slice(-20).join('\n')}`);
    const result = JSON.parse(line) as LoadResult;
    const growth: Record<string, { earlyMb: number; lateMb: number; growthPct: number }> = {};
    for (const name of ['api', 'worker']) {
      const s = sampler.series.get(name) ?? [];
      const end = s.at(-1)?.t ?? 0;
      // Early window after the warm-up (20-30 % of the run), late window the last 10 %.
      const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
      const early = median(s.filter((x) => x.t >= end * 0.2 && x.t <= end * 0.3).map((x) => x.rssKb));
      const late = median(s.filter((x) => x.t >= end * 0.9).map((x) => x.rssKb));
      growth[name] = { earlyMb: Math.round(early / 1024), lateMb: Math.round(late / 1024), growthPct: early ? Math.round(((late - early) / early) * 1000) / 10 : 0 };
    }
    return {
      scenario: 'soak',
      title: `memory soak: live verifications, 50 connections, ${seconds} s`,
      ours: { connections: 50, result, rssMb },
      targets: Object.entries(growth).map(([name, g]) => ({ name: `${name} RSS growth <= 10%`, pass: g.growthPct <= 10, value: `${g.earlyMb} -> ${g.lateMb} MB (${g.growthPct}%)` })),
      checks: { growth },
    };
  });
}

async function machine(): Promise<Record<string, string>> {
  const cpu = readFileSync('/proc/cpuinfo', 'utf8');
  const model = /model name\s*:\s*(.+)/.exec(cpu)?.[1]?.trim() ?? 'unknown';
  const c = new pg.Client({ connectionString: adminDatabaseUrl() });
  await c.connect();
  const pgVersion = (await c.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '?';
  await c.end();
  const redis = new Redis(process.env.BENCH_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 2 });
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

function cpuTimes(): { total: number; idle: number; steal: number } {
  const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { total, idle: (f[3] ?? 0) + (f[4] ?? 0), steal: f[7] ?? 0 };
}

async function measured(run: () => Promise<ScenarioReport>): Promise<ScenarioReport> {
  const load0 = loadavg()[0]!;
  const c0 = cpuTimes();
  const r = await run();
  const c1 = cpuTimes();
  const dt = Math.max(1, c1.total - c0.total);
  r.machineLoad = {
    loadStart: Math.round(load0 * 100) / 100,
    loadEnd: Math.round(loadavg()[0]! * 100) / 100,
    busyPct: Math.round((1 - (c1.idle - c0.idle) / dt) * 1000) / 10,
    stealPct: Math.round(((c1.steal - c0.steal) / dt) * 1000) / 10,
  };
  return r;
}

function jsonLine(r: ScenarioReport) {
  const brief = (m: Measured) => ({
    connections: m.connections,
    throughput: m.result.throughput,
    requests: m.result.requests,
    p50: m.result.latencyMs.p50,
    p95: m.result.latencyMs.p95,
    p99: m.result.latencyMs.p99,
    non2xx: m.result.non2xx,
    errors: m.result.errors,
    statuses: m.result.statuses,
    peakRssMb: m.rssMb,
    ...(m.cpuMsPerRequest ? { cpuMsPerRequest: m.cpuMsPerRequest } : {}),
    ...(m.pgWaits ? { pgWaits: m.pgWaits } : {}),
    ...(m.loopLagMs ? { loopLagMs: m.loopLagMs } : {}),
  });
  return JSON.stringify({
    scenario: r.scenario,
    title: r.title,
    ours: brief(r.ours),
    ...(r.baseline ? { baseline: brief(r.baseline), ratios: r.ratios } : {}),
    targets: r.targets,
    ...(r.machineLoad ? { machineLoad: r.machineLoad } : {}),
    ...(r.checks ? { checks: r.checks } : {}),
  });
}

function table(reports: ScenarioReport[]): string {
  const rows: string[] = [
    '| # | scenario | system | conns | req/s | p50 ms | p95 ms | p99 ms | non-2xx / errors | peak RSS MB | vs baseline |',
    '|---|---|---|---:|---:|---:|---:|---:|---|---|---|',
  ];
  const mem = (m: Measured, names: string[]) => names.filter((n) => m.rssMb[n] !== undefined).map((n) => `${n} ${m.rssMb[n]}`).join(', ');
  const line = (r: ScenarioReport, system: string, m: Measured, vs: string, names: string[]) =>
    `| ${r.scenario} | ${r.title} | ${system} | ${m.connections} | ${m.result.throughput} | ${m.result.latencyMs.p50} | ${m.result.latencyMs.p95} | ${m.result.latencyMs.p99} | ${m.result.non2xx} / ${m.result.errors} | ${mem(m, names)} | ${vs} |`;
  for (const r of reports) {
    rows.push(line(r, 'ours', r.ours, r.ratios ? `${Math.round(r.ratios.throughput * 100)}% req/s, p99 ${r.ratios.p99DeltaMs >= 0 ? '+' : ''}${r.ratios.p99DeltaMs} ms` : '', ['api', 'worker', 'loader']));
    if (r.baseline) rows.push(line(r, 'baseline', r.baseline, '', ['baseline', 'loader']));
    const experiments = (r.checks as { experiments?: Record<string, Measured> } | undefined)?.experiments;
    for (const [pattern, m] of Object.entries(experiments ?? {})) {
      const er = r.baseline ? ratios(m.result, r.baseline.result) : null;
      rows.push(line(r, `experiment: baseline + ${pattern}`, m, er ? `${Math.round(er.throughput * 100)}% of baseline req/s` : '', ['baseline']));
    }
    const light = (r.checks as { light?: Measured | { ours: Measured; baseline: Measured } } | undefined)?.light;
    if (light && 'result' in light) rows.push(line(r, `ours (light, ${light.connections} conns)`, light, '', ['api', 'worker']));
    if (light && 'ours' in light) {
      const lr = ratios(light.ours.result, light.baseline.result);
      rows.push(line(r, `ours (light, ${light.ours.connections} conns)`, light.ours, `${Math.round(lr.throughput * 100)}% req/s, p99 ${lr.p99DeltaMs >= 0 ? '+' : ''}${lr.p99DeltaMs} ms`, ['api', 'worker']));
      rows.push(line(r, `baseline (light, ${light.baseline.connections} conns)`, light.baseline, '', ['baseline']));
    }
  }
  rows.push('', '| # | target | result | met |', '|---|---|---|---|');
  for (const r of reports) for (const t of r.targets) rows.push(`| ${r.scenario} | ${t.name} | ${t.value} | ${t.pass ? 'yes' : '**no**'} |`);
  rows.push('', '### Diagnostics', '', 'Sampled during each measured run: mean number of PostgreSQL backends waiting on a row lock (Lock:*) and idle inside a transaction waiting for the client (the lock holder\'s next statement); what the lock holders were doing; event-loop delay of the API and worker (monitorEventLoopDelay, 5 ms resolution included); BullMQ job wait (added -> started) and run (started -> finished) times.', '');
  for (const r of reports) {
    if (r.machineLoad) rows.push(`- **${r.scenario} machine**: load average ${r.machineLoad.loadStart} at the start, ${r.machineLoad.loadEnd} at the end; both cores ${r.machineLoad.busyPct} % busy on average (every process of the machine, including other users' jobs), steal ${r.machineLoad.stealPct} %`);
    const diag = (label: string, m: Measured | undefined) => {
      if (!m?.pgWaits && !m?.loopLagMs && !m?.cpuMsPerRequest) return;
      const w = m.pgWaits ?? {};
      const locks = Object.entries(w).filter(([k]) => k.startsWith('Lock:')).reduce((a, [, v]) => a + v, 0);
      const idle = w['idle in transaction (waiting for the client)'] ?? 0;
      const holders = Object.entries(w).filter(([k]) => k.startsWith('lock holder: ')).slice(0, 3).map(([k, v]) => `${k.slice(13)} (${v})`).join('; ');
      const lag = m.loopLagMs ? Object.entries(m.loopLagMs).map(([k, v]) => `${k} p50 ${(v as { p50: number }).p50} / p99 ${(v as { p99: number }).p99} ms`).join(', ') : '';
      const cpu = m.cpuMsPerRequest ? Object.entries(m.cpuMsPerRequest).filter(([n]) => n !== 'loader').map(([n, v]) => `${n} ${v}`).join(', ') : '';
      rows.push(`- **${r.scenario} ${label}**: CPU ms per request ${cpu || 'n/a'}; waiting on row locks ${Math.round(locks * 100) / 100}, idle in transaction ${idle}; loop delay ${lag || 'n/a'}${holders ? `; lock holders: ${holders}` : ''}`);
    };
    diag('ours', r.ours);
    diag('baseline', r.baseline);
    for (const [pattern, m] of Object.entries((r.checks as { experiments?: Record<string, Measured> } | undefined)?.experiments ?? {})) diag(`experiment ${pattern}`, m);
    const light = (r.checks as { light?: Measured | { ours: Measured; baseline: Measured } } | undefined)?.light;
    if (light && 'result' in light) diag(`ours (light, ${light.connections} conns)`, light);
    if (light && 'ours' in light) {
      diag(`ours (light, ${LIGHT_CONNECTIONS} conns)`, light.ours);
      diag(`baseline (light, ${LIGHT_CONNECTIONS} conns)`, light.baseline);
    }
    const jobs = (r.checks as { jobs?: JobTimingsLike; jobsLight?: JobTimingsLike } | undefined) ?? {};
    if (jobs.jobs) rows.push(`- **${r.scenario} lookup jobs** (saturated): wait p50/p99 ${jobs.jobs.waitMs.p50}/${jobs.jobs.waitMs.p99} ms, run p50/p99 ${jobs.jobs.runMs.p50}/${jobs.jobs.runMs.p99} ms (the upstream answers in ${UPSTREAM_LATENCY_MS} ms)`);
    if (jobs.jobsLight) rows.push(`- **${r.scenario} lookup jobs** (light): wait p50/p99 ${jobs.jobsLight.waitMs.p50}/${jobs.jobsLight.waitMs.p99} ms, run p50/p99 ${jobs.jobsLight.runMs.p50}/${jobs.jobsLight.runMs.p99} ms`);
  }
  return rows.join('\n');
}

type JobTimingsLike = { waitMs: { p50: number; p99: number }; runMs: { p50: number; p99: number } };

function replaceSection(doc: string, name: string, content: string): string {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const block = `${start}\n${content}\n${end}`;
  const i = doc.indexOf(start);
  const j = doc.indexOf(end);
  if (i >= 0 && j > i) return doc.slice(0, i) + block + doc.slice(j + end.length);
  return `${doc.trimEnd()}\n\n${block}\n`;
}

function writeResults(m: Record<string, string>, reports: ScenarioReport[], soakRun: boolean): void {
  const path = repoPath('bench/RESULTS.md');
  let doc = existsSync(path)
    ? readFileSync(path, 'utf8')
    : '# Benchmark results\n\nWritten by `npm run bench` (scenarios) and `npm run bench -- --soak` (memory soak); bench/analysis.md is copied in below.\n';
  const machineTable = ['| nproc | CPU | memory | Node | PostgreSQL | Redis | run at |', '|---|---|---|---|---|---|---|', `| ${m.nproc} | ${m.cpu} | ${m.memory} | ${m.node} | ${m.postgresql} | ${m.redis} | ${m.date} |`].join('\n');
  const settings = `Service tuning: ${Object.entries(SERVICE_TUNING).map(([k, v]) => `${k}=${v}`).join(', ')}; LOG_LEVEL=warn; rate limits raised out of the way. ` +
    `Each run: ${WARMUP} s warm-up (discarded), then ${DURATION} s measured; latencies are of every answered request. Load generator: autocannon in its own process on the same 2 cores.`;
  if (soakRun) {
    doc = replaceSection(doc, 'soak', `## Memory soak\n\n${machineTable}\n\n${table(reports)}\n\nRSS sampled from /proc/<pid>/status every 2 s; growth compares the median of the 20-30 % window with the last 10 %.`);
  } else {
    doc = replaceSection(doc, 'scenarios', `## Scenarios\n\n${machineTable}\n\n${settings}\n\n${table(reports)}`);
    const analysisPath = repoPath('bench/analysis.md');
    if (existsSync(analysisPath)) doc = replaceSection(doc, 'analysis', readFileSync(analysisPath, 'utf8').trim());
  }
  writeFileSync(path, doc);
}

const SCENARIOS: Record<string, () => Promise<ScenarioReport>> = {
  '1': scenarioFixture,
  '2': scenarioLive,
  '3': scenarioRequery,
  '4': scenarioWebhookStorm,
};

try {
  const m = await machine();
  process.stderr.write(`machine: ${JSON.stringify(m)}\n`);
  const reports: ScenarioReport[] = [];
  if (args.soak) {
    const seconds = Number(args['soak-seconds']);
    if (!Number.isFinite(seconds) || seconds < 10) throw new Error('--soak-seconds must be a number >= 10');
    const r = await measured(() => soak(seconds));
    process.stdout.write(`${jsonLine(r)}\n`);
    reports.push(r);
  } else {
    const wanted = args.only ? args.only.split(',').map((s) => s.trim()) : Object.keys(SCENARIOS);
    for (const id of wanted) {
      const run = SCENARIOS[id];
      if (!run) throw new Error(`unknown scenario ${id}`);
      process.stderr.write(`scenario ${id}...\n`);
      if (args.profile) profileDir = mkdtempSync(join(tmp, `prof-${id}-`));
      const r = await measured(run);
      if (profileDir) {
        r.checks = { ...r.checks, profiles: Object.fromEntries(['api', 'worker'].filter((n) => existsSync(join(profileDir!, `${n}.cpuprofile`))).map((n) => [n, summariseProfile(join(profileDir!, `${n}.cpuprofile`))])) };
      }
      process.stdout.write(`${jsonLine(r)}\n`);
      reports.push(r);
    }
  }
  writeResults(m, reports, args.soak ?? false);
  process.stdout.write(`\n${table(reports)}\n`);
  process.stderr.write(`written ${repoPath('bench/RESULTS.md')}\n`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
