import type { ScenarioResult } from './authority-scenarios.ts';
import { sleep } from './lib/proc.ts';
import { atLeast, atMost, percentile, runTenantsLoad, runTenantsLoadTimed, statuses } from './lib/tenant-measure.ts';
import { startTenantStack } from './lib/tenant-stack.ts';

/**
 * The authority's own limits: a calls-per-second limit we must stay under across two worker
 * processes, an outage the breaker must absorb, and the global concurrency limit split over one
 * or two worker processes.
 */

const ms = (r: { ms: number | null }) => r.ms ?? Number.POSITIVE_INFINITY;

/** Authority limit 20 calls/s, ours 20/s across two workers, a backlog kept for 70 s. */
export async function rateLimited(): Promise<ScenarioResult> {
  const stack = await startTenantStack({
    apiProcesses: 1,
    workerProcesses: 2,
    sim: { SIM_LATENCY_MEDIAN_MS: '300', SIM_LATENCY_P95_MS: '800', SIM_RATE_LIMIT: '20', SIM_RATE_WINDOW: 'bucket' },
    env: { IDENTITY_MAX_RPS: '20', IDENTITY_MAX_CONCURRENCY: '32', LOOKUP_CONCURRENCY: '32' },
  });
  try {
    const a = await stack.createOrg({ units: 1_000_000, maxInFlight: 1000 });
    await stack.sim.reset();
    const started = Math.floor(Date.now() / 1000);
    const load = await runTenantsLoad({ url: stack.apiUrl, timeoutS: 60, tenants: [{ name: 'A', token: a.token, mode: 'closed', concurrency: 100, stopAtS: 70 }] });
    const stats = await stack.sim.stats();
    // The 60 whole seconds after a 5 s ramp-up.
    const window = stats.seconds.filter((s) => s.second >= started + 5 && s.second < started + 65);
    const accepted = window.reduce((n, s) => n + s.accepted, 0);
    const lookups = stats.accepted + stats.rateLimited + stats.concurrencyLimited;
    return {
      name: 'rate_limited_authority',
      targets: [
        atLeast('rate_limited_calls_per_s', accepted / 60, 18, { note: `slowest second ${Math.min(...window.map((s) => s.accepted))}` }),
        atMost('rate_limited_max_calls_in_a_second', Math.max(...stats.seconds.map((s) => s.received)), 20),
        atMost('rate_limited_429_share', (stats.rateLimited + stats.concurrencyLimited) / Math.max(1, lookups), 0.01),
      ],
      facts: { A: statuses(load.A!), seconds: window.length, calls: stats.calls, accepted: stats.accepted, rateLimited: stats.rateLimited },
    };
  } finally {
    await stack.stop();
  }
}

/** The authority answers 503 for 30 s, then recovers: the breaker opens, refuses fast, probes, closes. */
export async function authorityDown(): Promise<ScenarioResult> {
  const cooldownMs = 5000;
  const stack = await startTenantStack({
    apiProcesses: 2,
    workerProcesses: 2,
    sim: { SIM_LATENCY_MEDIAN_MS: '300', SIM_LATENCY_P95_MS: '800' },
    env: { IDENTITY_BREAKER_COOLDOWN_MS: String(cooldownMs), ORG_MAX_IN_FLIGHT: '1000' },
  });
  try {
    const a = await stack.createOrg({ units: 1_000_000 });
    const before = await stack.ledger();
    const run = runTenantsLoadTimed({ url: stack.apiUrl, timeoutS: 60, tenants: [{ name: 'A', token: a.token, mode: 'open', rate: 40, stopAtS: 60 }] });
    await sleep(10_000);
    await stack.sim.outage({ mode: '503', forMs: 30_000 });
    const outageWallMs = Date.now();
    // "Once the breaker is open": from the moment the API (where refusals are decided) sees it open.
    // Requests that started before were admitted while it was closed and answer when their job
    // settles, however their job ends.
    let openedWallMs = Number.POSITIVE_INFINITY;
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(50)) {
      if ((await stack.circuitState()) === 2) {
        openedWallMs = Date.now();
        break;
      }
    }
    const { t0WallMs, tenants } = await run;
    const A = tenants.A!;
    for (let i = 0; i < 240 && (await stack.ledger()).pending > 0; i++) await sleep(500);
    const after = await stack.ledger();
    const outageAt = outageWallMs - t0WallMs;
    const openedAt = openedWallMs - t0WallMs;
    const restoredAt = outageAt + 30_000;
    const open = A.filter((r) => r.code === 'upstream_circuit_open');
    const whileOpen = open.filter((r) => r.startMs >= openedAt && r.startMs < restoredAt);
    const beforeSeen = open.filter((r) => r.startMs < openedAt);
    // The first success started after the restore, and how long that probe itself took.
    const firstOk = A.filter((r) => r.status === 200 && r.startMs >= restoredAt).sort((x, y) => x.startMs + ms(x) - (y.startMs + ms(y)))[0];
    const recoveryMs = firstOk ? firstOk.startMs + ms(firstOk) - restoredAt : Number.POSITIVE_INFINITY;
    const probeMs = firstOk ? ms(firstOk) : 0;
    const ok200 = A.filter((r) => r.status === 200).length;
    return {
      name: 'authority_down',
      targets: [
        atMost('breaker_open_503_p99_ms', percentile(whileOpen.map(ms), 99), 50, {
          note: `${whileOpen.length} refused after the API saw it open; ${beforeSeen.length} admitted just before answered 503 when their job was refused, p99 ${Math.round(percentile(beforeSeen.map(ms), 99))} ms`,
        }),
        atMost('breaker_charged_without_200', Math.abs(after.debits - before.debits - ok200), 0),
        atMost('breaker_first_success_after_restore_ms', recoveryMs, cooldownMs + probeMs + 500, { note: `cool-down ${cooldownMs} ms + probe ${Math.round(probeMs)} ms + 0.5 s of scheduling` }),
        atMost('breaker_reserved_at_rest', after.reserved + after.pending, 0),
      ],
      facts: { A: statuses(A), openedAfterOutageMs: openedAt - outageAt, recoveryMs },
    };
  } finally {
    await stack.stop();
  }
}

/** 32 calls in flight across the service: one worker process running 32, or two running 32 each under the global 32. */
export async function scaling(): Promise<ScenarioResult> {
  const runs: { workers: number; throughput: number; peak: number }[] = [];
  for (const workers of [1, 2]) {
    const stack = await startTenantStack({
      apiProcesses: 1,
      workerProcesses: workers,
      sim: { SIM_LATENCY_MS: '200' },
      env: { IDENTITY_MAX_CONCURRENCY: '32', LOOKUP_CONCURRENCY: '32' },
    });
    try {
      const a = await stack.createOrg({ units: 1_000_000, maxInFlight: 1000 });
      await stack.sim.reset();
      const A = (await runTenantsLoad({ url: stack.apiUrl, timeoutS: 60, tenants: [{ name: 'A', token: a.token, mode: 'closed', concurrency: 64, stopAtS: 25 }] })).A!;
      const done = A.filter((r) => r.status === 200 && r.ms !== null && r.startMs + r.ms >= 5000 && r.startMs + r.ms < 25_000);
      runs.push({ workers, throughput: done.length / 20, peak: (await stack.sim.stats()).peakConcurrency });
    } finally {
      await stack.stop();
    }
  }
  const [one, two] = runs as [(typeof runs)[0], (typeof runs)[0]];
  return {
    name: 'scaling',
    targets: [
      atLeast('scaling_two_workers_vs_one', two.throughput / one.throughput, 0.95, { note: `${two.throughput.toFixed(1)}/s vs ${one.throughput.toFixed(1)}/s` }),
      atMost('scaling_peak_calls_in_flight', Math.max(one.peak, two.peak), 32),
    ],
    facts: { runs },
  };
}
