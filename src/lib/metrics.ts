import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * One registry per process (API or worker), so tests can build several apps side by side. The API's
 * queue depth gauge (`queue_jobs`) is registered by modules/ops/metrics.ts, where the queues are known.
 */
export function createMetrics(opts: { process: 'api' | 'worker' | 'face' | 'admin'; defaults?: boolean }) {
  const registry = new Registry();
  registry.setDefaultLabels({ process: opts.process });
  if (opts.defaults !== false) collectDefaultMetrics({ register: registry });
  const m = {
    registry,
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by route and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    logins: new Counter({ name: 'logins_total', help: 'Login attempts by outcome', labelNames: ['outcome'] as const, registers: [registry] }),
    verifications: new Counter({
      name: 'verifications_total',
      help: 'Verification requests by mode and outcome',
      labelNames: ['mode', 'outcome'] as const,
      registers: [registry],
    }),
    unitsDebited: new Counter({ name: 'wallet_units_debited_total', help: 'Units debited for successful verifications', registers: [registry] }),
    unitsCredited: new Counter({ name: 'wallet_units_credited_total', help: 'Units credited by top-ups (bonus included)', registers: [registry] }),
    upstreamDuration: new Histogram({
      name: 'upstream_request_duration_seconds',
      help: 'Identity-authority call latency by outcome',
      labelNames: ['dialect', 'operation', 'outcome'] as const,
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    // The identity authority as a shared, limited resource. No organisation ids as labels: the label
    // sets stay bounded however many customers there are.
    lookupWait: new Histogram({
      name: 'lookup_wait_seconds',
      help: 'Time a live lookup waited in the queue before a worker started it',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60],
      registers: [registry],
    }),
    admissionsRefused: new Counter({
      name: 'lookup_admissions_refused_total',
      help: 'Live verifications refused at the door (429), by reason: cap (organisation in-flight cap) or predicted_wait',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    authorityRateLimited: new Counter({ name: 'authority_rate_limited_total', help: 'Authority calls answered 429', registers: [registry] }),
    authorityCircuit: new Gauge({
      name: 'authority_circuit_state',
      help: 'Circuit breaker on the identity authority as this process sees it: 0 closed, 1 half-open, 2 open',
      registers: [registry],
    }),
    topups: new Counter({ name: 'topups_total', help: 'Top-ups by state reached', labelNames: ['state'] as const, registers: [registry] }),
    jobDuration: new Histogram({
      name: 'job_duration_seconds',
      help: 'Job processing time by queue, job and outcome',
      labelNames: ['queue', 'job', 'outcome'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    jobFailures: new Counter({ name: 'job_failures_total', help: 'Job attempts that threw', labelNames: ['queue', 'job'] as const, registers: [registry] }),
    ledgerMismatches: new Gauge({ name: 'ledger_audit_mismatches', help: 'Wallets whose balance differs from their ledger at the last audit', registers: [registry] }),
    ledgerReservedMismatches: new Gauge({
      name: 'ledger_audit_reserved_mismatches',
      help: 'Wallets whose reserved units differ from the verifications holding a unit at the last audit',
      registers: [registry],
    }),
    ledgerAuditRuns: new Counter({ name: 'ledger_audit_runs_total', help: 'Ledger audits run', labelNames: ['result'] as const, registers: [registry] }),
  };
  return m;
}

export type Metrics = ReturnType<typeof createMetrics>;
