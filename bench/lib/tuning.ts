/** The identity simulator's fixed latency in the live scenarios. */
export const UPSTREAM_LATENCY_MS = 50;

/**
 * The service's settings for every scenario, on both sides of each comparison (bench/analysis.md
 * says how they were chosen); the defaults hold for everything else. Per-organisation caps, the
 * authority's concurrency limit and (in lib/stack.ts) the rate limits are raised out of the way:
 * the benchmark measures the request path, not its refusals. BENCH_SVC_<NAME>=value in the
 * environment overrides or adds a service variable (experiments).
 */
export const SERVICE_TUNING: Record<string, string> = {
  LOOKUP_CONCURRENCY: '64',
  ORG_MAX_IN_FLIGHT: '100000',
  IDENTITY_MAX_CONCURRENCY: '100000',
  ...Object.fromEntries(
    Object.entries(process.env)
      .filter(([k, v]) => k.startsWith('BENCH_SVC_') && v !== undefined)
      .map(([k, v]) => [k.slice('BENCH_SVC_'.length), v!]),
  ),
};
