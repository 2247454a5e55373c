import { availableParallelism, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { batchFairness } from './authority-batch.ts';
import { batchFastAuthority } from './authority-batch-fast.ts';
import { authorityDown, rateLimited, scaling } from './authority-limits.ts';
import { admission, noisyNeighbour, type ScenarioResult } from './authority-scenarios.ts';
import { writeResultsSection } from './lib/tenant-measure.ts';

/**
 * `npm run bench:authority [-- --only noisy,admission,rate,down,scaling,batch,batch-fast]`: the identity authority as
 * a slow, limited resource shared by organisations. Each scenario starts the real service (two API
 * and two worker processes unless it says otherwise, the simulator as a process), drives it from a
 * separate load-generator process, prints one JSON line per target and writes the "authority"
 * section of bench/RESULTS.md. About ten minutes.
 */
const { values } = parseArgs({ options: { only: { type: 'string' } } });
const only = values.only ? new Set(values.only.split(',')) : null;
const want = (name: string) => !only || only.has(name);

const started = new Date();
const results: ScenarioResult[] = [];
const machine = () => ({ cores: availableParallelism(), load1: Math.round(loadavg()[0]! * 100) / 100 });

const scenarios: [string, () => Promise<ScenarioResult | ScenarioResult[]>][] = [
  ['noisy', noisyNeighbour],
  ['admission', admission],
  ['rate', rateLimited],
  ['down', authorityDown],
  ['scaling', scaling],
  ['batch', batchFairness],
  ['batch-fast', batchFastAuthority],
];
for (const [key, run] of scenarios) {
  if (!want(key)) continue;
  const before = machine();
  const out = await run();
  for (const r of Array.isArray(out) ? out : [out]) {
    for (const t of [...r.targets, ...(r.info ?? [])]) process.stdout.write(`${JSON.stringify(t)}\n`);
    process.stdout.write(`${JSON.stringify({ scenario: r.name, machineBefore: before, machineAfter: machine(), ...r.facts })}\n`);
    results.push(r);
  }
}

const rows = results.flatMap((r) => [
  ...r.targets.map((t) => `| ${t.target} | ${t.value} | ${t.goal} | ${t.met ? 'met' : '**missed**'} | ${t.note ?? ''} |`),
  ...(r.info ?? []).map((t) => `| ${t.target} | ${t.value} | | information | ${t.note ?? ''} |`),
]);
// A run of one batch scenario alone keeps the full run's section and writes one of its own.
const single = only !== null && only.size === 1 ? [...only][0]! : null;
const section = single === 'batch' ? 'authority-batch' : single === 'batch-fast' ? 'authority-batch-fast' : 'authority';
writeResultsSection(
  section,
  `## The identity authority as a shared resource (\`npm run bench:authority\`)

Run ${started.toISOString()}, ${machine().cores} cores; every scenario measured in this one run.
${
  single === 'batch-fast'
    ? 'Authority: the simulator as a process, answering at once (the sandbox as it comes): our own CPU is the limit, not its slots.'
    : 'Authority: the simulator as a process, latency lognormal with median 1.2 s and p95 4 s seeded per\nNIN (noisy neighbour, admission), our key limited to 32 calls in flight (`IDENTITY_MAX_CONCURRENCY`); batch-fast: answering at once.'
}
Two API processes on one port and two worker processes unless the scenario says otherwise.

| target | value | goal | | note |
|---|---|---|---|---|
${rows.join('\n')}

<details><summary>Facts per scenario (statuses by status:code, requeries, rates)</summary>

\`\`\`json
${results.map((r) => JSON.stringify({ scenario: r.name, ...r.facts })).join('\n')}
\`\`\`
</details>`,
);
