import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { machine, removeTmp, tmp, underLoad, type RunOptions } from './lib/measure.ts';
import { repoPath } from './lib/proc.ts';
import { cpuLine, jsonLine, targetLine, writeResults, type ScenarioReport } from './lib/report.ts';
import { SERVICE_TUNING, UPSTREAM_LATENCY_MS } from './lib/tuning.ts';
import { scenarioFixture } from './scenarios/fixture.ts';
import { scenarioLive } from './scenarios/live.ts';
import { scenarioRequery } from './scenarios/requery.ts';
import { soak } from './scenarios/soak.ts';
import { scenarioWebhookStorm } from './scenarios/webhooks.ts';

/**
 * `npm run bench`: each scenario starts the real service (API and worker as separate processes;
 * for the live comparison also the service with LOOKUP_INLINE as one API process), drives it over
 * HTTP from a separate autocannon process next to the machine's ceilings, prints one JSON line per
 * scenario, then one line per target ({"target", "value", "goal", "met"}), and writes bench/RESULTS.md.
 * Options: --only live,fixture,requery,webhooks   --duration S (default 12)   --warmup S (default 3)
 *          --no-profile (no V8 CPU profiles)   --soak [--soak-seconds N] (the memory soak only).
 * Exits 1 when a target is missed or a check fails.
 */
const args = parseArgs({
  options: {
    soak: { type: 'boolean', default: false },
    'soak-seconds': { type: 'string', default: '300' },
    only: { type: 'string' },
    duration: { type: 'string', default: '12' },
    warmup: { type: 'string', default: '3' },
    profile: { type: 'boolean', default: true },
  },
  allowNegative: true,
  allowPositionals: false,
}).values;

const SCENARIOS: Record<string, (o: RunOptions) => Promise<ScenarioReport>> = {
  live: scenarioLive,
  fixture: scenarioFixture,
  requery: scenarioRequery,
  webhooks: scenarioWebhookStorm,
};

const base: RunOptions = { durationS: Number(args.duration), warmupS: Number(args.warmup) };
if (!(base.durationS >= 1) || !(base.warmupS >= 0)) throw new Error('--duration must be >= 1 and --warmup >= 0');

const settings =
  `Service settings on every side: ${Object.entries(SERVICE_TUNING).map(([k, v]) => `${k}=${v}`).join(', ')}, RATE_LIMIT_PER_TOKEN and RATE_LIMIT_PER_ORG 100000000, LOG_LEVEL=warn; ` +
  `upstream (identity simulator) ${UPSTREAM_LATENCY_MS} ms in the live scenario. The inline side is the same service with LOOKUP_INLINE=true in one API process; the queued side is one API and one worker process. ` +
  `Each run: ${base.warmupS} s warm-up (discarded), then ${base.durationS} s measured. Throughput counts 2xx answers only and latencies are of 2xx answers; any non-2xx answer, error or timeout fails the target of its run. ` +
  `Load generator: autocannon in its own process on the same cores. V8 CPU profiles: ${args.profile ? 'on (every side, so the overhead is on both)' : 'off'}.`;

let failed = false;
try {
  const m = await machine();
  process.stderr.write(`machine: ${JSON.stringify(m)}\n`);
  const reports: ScenarioReport[] = [];
  const wanted = args.soak ? ['soak'] : args.only ? args.only.split(',').map((s) => s.trim()) : Object.keys(SCENARIOS);
  for (const id of wanted) {
    const run = id === 'soak' ? (o: RunOptions) => soak(o, Number(args['soak-seconds'])) : SCENARIOS[id];
    if (!run) throw new Error(`unknown scenario ${id} (known: ${Object.keys(SCENARIOS).join(', ')})`);
    process.stderr.write(`scenario ${id}...\n`);
    const o = { ...base, ...(args.profile && id !== 'soak' ? { profileDir: mkdtempSync(join(tmp, `prof-${id}-`)) } : {}) };
    const { value: r, machineLoad } = await underLoad(() => run(o));
    r.machineLoad = machineLoad;
    process.stdout.write(`${jsonLine(r)}\n`);
    reports.push(r);
  }
  for (const t of reports.flatMap((r) => r.targets)) {
    process.stdout.write(`${targetLine(t)}\n`);
    if (!t.met && !t.info) failed = true;
  }
  for (const r of reports) if (r.cpu) process.stdout.write(`${cpuLine(r.cpu)}\n`);
  if (reports.some((r) => r.checks.some((c) => !c.pass))) failed = true;
  const table = writeResults(m, settings, reports, args.soak ?? false);
  process.stderr.write(`\n${table}\n\nwritten ${repoPath('bench/RESULTS.md')}\n`);
} finally {
  removeTmp();
}
process.exitCode = failed ? 1 : 0;
