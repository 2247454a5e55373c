import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

/**
 * The load generator, run as its own process by bench/run.ts (and never inside the service's
 * processes): `node bench/load.ts <spec.json>`. Prints one JSON line: throughput, latency
 * percentiles of every answered request (2xx or not), status counts, errors and timeouts.
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
};

export type LoadResult = {
  requests: number;
  durationS: number;
  throughput: number;
  latencyMs: { p50: number; p95: number; p99: number; max: number; mean: number };
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

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Math.round(sorted[i]! * 100) / 100;
}

async function run(spec: LoadSpec, record: boolean): Promise<LoadResult> {
  const latencies: number[] = [];
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
      // Latency of every answer, not only 2xx: a fast 503 is still a latency the client sees.
      excludeErrorStats: false,
    },
    (err, r) => (err ? fail(err) : finish(r)),
  );
  if (record) {
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      latencies.push(responseTime);
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
    });
  }
  const result = await done;
  const elapsedS = Number(process.hrtime.bigint() - started) / 1e9;
  latencies.sort((a, b) => a - b);
  const answered = latencies.length;
  const mean = answered ? latencies.reduce((a, b) => a + b, 0) / answered : 0;
  return {
    requests: answered,
    durationS: Math.round(elapsedS * 100) / 100,
    throughput: Math.round((answered / elapsedS) * 10) / 10,
    latencyMs: {
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
      max: percentile(latencies, 100),
      mean: Math.round(mean * 100) / 100,
    },
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
