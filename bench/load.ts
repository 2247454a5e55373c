import { readFileSync, writeFileSync } from 'node:fs';
import autocannon from 'autocannon';

/**
 * The load generator, run as its own process by bench/run.ts (and never inside the service's
 * processes): `node bench/load.ts <spec.json>`. Prints one JSON line: throughput and latency
 * percentiles of 2xx answers only (a fast refusal is not service), status counts, errors and timeouts;
 * `allLatencyMs` keeps the percentiles of every answer for diagnosis.
 */
export type LoadSpec = {
  url: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  connections: number;
  durationS?: number;
  /** Exactly this many requests instead of a duration. */
  amount?: number;
  /** A discarded run of this length first (JIT, pools, caches). */
  warmupS?: number;
  body?: string;
  /** A fresh live-looking NIN per request (never starting with 0 or 5: found, no fault). */
  bodyKind?: 'random-live-nin';
  reason?: string;
  /** JSON file of [{ body, headers }], sent in order (for the webhook storm). */
  bodiesFile?: string;
  timeoutS?: number;
  /** Requests per second across all connections (a paced load below saturation); none: as fast as answered. */
  overallRate?: number;
  /** Also write the latency of every 2xx answer here (JSON array, ms), for runs merged by lib/interleave.ts. */
  okLatenciesFile?: string;
};

type Latencies = { p50: number; p95: number; p99: number; max: number; mean: number };

export type LoadResult = {
  /** Every answered request, 2xx or not. */
  requests: number;
  /** 2xx answers. */
  ok: number;
  durationS: number;
  /** 2xx answers per second. */
  throughput: number;
  /** Of 2xx answers. */
  latencyMs: Latencies;
  /** Of every answer. */
  allLatencyMs: Latencies;
  statuses: Record<string, number>;
  non2xx: number;
  errors: number;
  timeouts: number;
};

function randomLiveNin(): string {
  const first = '12346789'[Math.floor(Math.random() * 8)]!;
  let s = first;
  for (let i = 0; i < 10; i++) s += Math.floor(Math.random() * 10);
  return s;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Math.round(sorted[i]! * 100) / 100;
}

async function run(spec: LoadSpec, record: boolean): Promise<LoadResult> {
  const latencies: number[] = [];
  const okLatencies: number[] = [];
  const statuses: Record<string, number> = {};
  const bodies = spec.bodiesFile ? (JSON.parse(readFileSync(spec.bodiesFile, 'utf8')) as { body: string; headers: Record<string, string> }[]) : null;
  let next = 0;
  const request: autocannon.Request = { method: spec.method, path: spec.path, headers: spec.headers };
  if (spec.body !== undefined) request.body = spec.body;
  if (spec.bodyKind === 'random-live-nin') {
    request.setupRequest = (req) => ({ ...req, body: JSON.stringify({ nin: randomLiveNin(), reason: spec.reason ?? 'corporate' }) });
  } else if (bodies) {
    request.setupRequest = (req) => {
      const b = bodies[next++ % bodies.length]!;
      return { ...req, body: b.body, headers: { ...spec.headers, ...b.headers } };
    };
  }
  const started = process.hrtime.bigint();
  let finish: (r: autocannon.Result) => void = () => undefined;
  let fail: (e: unknown) => void = () => undefined;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const instance = autocannon(
    {
      url: spec.url,
      connections: spec.connections,
      ...(spec.amount ? { amount: spec.amount } : { duration: spec.durationS ?? 10 }),
      ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
      timeout: spec.timeoutS ?? 30,
      requests: [request],
      // Every answer is recorded (the 'response' event); the 2xx-only figures are computed here.
      excludeErrorStats: false,
    },
    (err, r) => (err ? fail(err) : finish(r)),
  );
  if (record) {
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      latencies.push(responseTime);
      if (statusCode >= 200 && statusCode < 300) okLatencies.push(responseTime);
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
    });
  }
  const result = await done;
  if (record && spec.okLatenciesFile) writeFileSync(spec.okLatenciesFile, JSON.stringify(okLatencies));
  const elapsedS = Number(process.hrtime.bigint() - started) / 1e9;
  const summary = (xs: number[]): Latencies => {
    xs.sort((a, b) => a - b);
    return {
      p50: percentile(xs, 50),
      p95: percentile(xs, 95),
      p99: percentile(xs, 99),
      max: percentile(xs, 100),
      mean: xs.length ? Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 100) / 100 : 0,
    };
  };
  return {
    requests: latencies.length,
    ok: okLatencies.length,
    durationS: Math.round(elapsedS * 100) / 100,
    throughput: Math.round((okLatencies.length / elapsedS) * 10) / 10,
    latencyMs: summary(okLatencies),
    allLatencyMs: summary(latencies),
    statuses,
    non2xx: Object.entries(statuses).filter(([s]) => !s.startsWith('2')).reduce((a, [, n]) => a + n, 0),
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

if (import.meta.main) {
  const spec = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as LoadSpec;
  if (spec.warmupS && spec.warmupS > 0) {
    const { amount: _amount, ...rest } = spec;
    await run({ ...rest, durationS: spec.warmupS }, false);
  }
  const result = await run(spec, true);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
