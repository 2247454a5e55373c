import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { LoadResult } from '../load.ts';
import type { MachineLoad, Measured } from './measure.ts';
import { repoPath } from './proc.ts';

/** One of the issue's targets: a ratio or a difference of two runs of the same run of the benchmark. */
export type Target = {
  target: string;
  value: number;
  goal: number;
  op: '>=' | '<=';
  met: boolean;
  /** How the value was formed, and why it failed when it did for a reason other than the number. */
  how: string;
  /** Printed for information only: no goal to meet, never fails the run (the hello-world ratios). */
  info?: boolean;
};

/** API CPU per request beside the floor's, with each profile's top five packages (by caller). */
export type CpuComparison = {
  scenario: string;
  apiMsPerRequest: number | null;
  floorMsPerRequest: number | null;
  /** The floor that also makes the contract's writes (FLOOR_SAME_WRITES), when measured. */
  writesFloorMsPerRequest?: number | null;
  apiTop5: string[];
  floorTop5: string[];
};

/** A row of the results table: one load run of one system. */
export type Row = { system: string; m: Measured; names: string[] };

export type ScenarioReport = {
  scenario: string;
  title: string;
  rows: Row[];
  targets: Target[];
  /** Correctness checks of the run (ledger, exactly-once): a failed one fails the benchmark's word. */
  checks: { name: string; pass: boolean; value: string }[];
  /** Measured causes: sentences built from the diagnostics sampled during the runs. */
  diagnostics: string[];
  cpu?: CpuComparison;
  details?: Record<string, unknown>;
  machineLoad?: MachineLoad;
};

const clean = (r: LoadResult) => r.non2xx === 0 && r.errors === 0 && r.timeouts === 0 && r.ok > 0;
const dirty = (label: string, r: LoadResult) => (clean(r) ? '' : ` ${label}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts (${JSON.stringify(r.statuses)}).`);

/**
 * A target over two runs. Any non-2xx answer, error or timeout in either run fails it whatever the
 * number says: a system that sheds load could otherwise look fast.
 */
export function target(name: string, o: { value: number; goal: number; op: '>=' | '<='; how: string; runs: [string, LoadResult][]; also?: boolean }): Target {
  const value = Math.round(o.value * 1000) / 1000;
  // `also`: a further condition folded into `met` (a floor's throughput target needs its p99 ratio too).
  const numberMet = (o.op === '>=' ? value >= o.goal : value <= o.goal) && o.also !== false;
  const bad = o.runs.map(([label, r]) => dirty(label, r)).join('');
  return { target: name, value, goal: o.goal, op: o.op, met: numberMet && bad === '', how: o.how + bad };
}

/** A ratio printed for information (no goal, no `met`). */
export function infoTarget(name: string, value: number, how: string): Target {
  return { target: name, value: Math.round(value * 1000) / 1000, goal: Number.NaN, op: '>=', met: true, how, info: true };
}

/** The line `npm run bench` prints per target; an information line has neither goal nor `met`. */
export const targetLine = (t: Target) =>
  JSON.stringify(t.info ? { target: t.target, value: t.value, info: 'no goal: printed for information' } : { target: t.target, value: t.value, goal: t.goal, met: t.met });

const top5 = (m: Measured | undefined, name: string) => (m?.profiles?.[name]?.owners ?? []).slice(0, 5).map((a) => `${a.area} ${a.pct} %`);

/** The per-request CPU line of a scenario measured against its floor. */
export function cpuComparison(scenario: string, service: Measured, floor: Measured, writes?: { m: Measured; name: string }): CpuComparison {
  return {
    scenario,
    apiMsPerRequest: service.cpuMsPerRequest?.api ?? null,
    floorMsPerRequest: floor.cpuMsPerRequest?.floor ?? null,
    ...(writes ? { writesFloorMsPerRequest: writes.m.cpuMsPerRequest?.[writes.name] ?? null } : {}),
    apiTop5: top5(service, 'api'),
    floorTop5: top5(floor, 'floor'),
  };
}

export const cpuLine = (c: CpuComparison) =>
  JSON.stringify({ cpu_per_request: c.scenario, api_ms: c.apiMsPerRequest, floor_ms: c.floorMsPerRequest, ...(c.writesFloorMsPerRequest !== undefined ? { floor_with_writes_ms: c.writesFloorMsPerRequest } : {}), api_top5_by_package: c.apiTop5, floor_top5_by_package: c.floorTop5 });

/** Event-loop, CPU and row-lock figures of one run as one sentence, then one per process's CPU profile. */
export function diagnose(label: string, m: Measured | undefined): string[] {
  if (!m?.pgWaits && !m?.loopLagMs && !m?.cpuMsPerRequest) return [];
  const w = m.pgWaits ?? {};
  const locks = Object.entries(w).filter(([k]) => k.startsWith('Lock:')).reduce((a, [, v]) => a + v, 0);
  const idle = w['idle in transaction (waiting for the client)'] ?? 0;
  const wal = Object.entries(w).filter(([k]) => /WAL/i.test(k) && !k.startsWith('lock holder')).reduce((a, [, v]) => a + v, 0);
  const holders = Object.entries(w).filter(([k]) => k.startsWith('lock holder: ')).slice(0, 3).map(([k, v]) => `${k.slice(13)} (${v})`).join('; ');
  const lag = Object.entries(m.loopLagMs ?? {}).filter(([, v]) => v).map(([k, v]) => `${k} p50 ${v!.p50} / p99 ${v!.p99} ms`).join(', ');
  const cpu = m.cpuMsPerRequest ? Object.entries(m.cpuMsPerRequest).map(([n, v]) => `${n} ${v}`).join(', ') : '';
  return [
    `**${label}**: CPU ms per request ${cpu || 'n/a'}; backends waiting on row locks ${Math.round(locks * 100) / 100}, idle in transaction ${idle}, waiting on WAL ${Math.round(wal * 100) / 100}; event-loop delay ${lag || 'n/a'}${holders ? `; lock holders: ${holders}` : ''}`,
    ...Object.entries(m.profiles ?? {}).map(([n, p]) => describeProfile(`${label}, ${n}`, p)),
  ];
}

type Profile = { busyPct: number; areas: { area: string; pct: number }[]; owners: { area: string; pct: number }[]; functions: { fn: string; pct: number }[] };

/** A CPU profile as one sentence: busy share, top areas, top functions (self time). */
function describeProfile(name: string, p: Profile): string {
  const areas = p.areas.filter((a) => a.area !== 'idle').slice(0, 8).map((a) => `${a.area} ${a.pct} %`).join(', ');
  const fns = p.functions.slice(0, 6).map((f) => `${f.fn} ${f.pct} %`).join('; ');
  const owners = p.owners.slice(0, 10).map((a) => `${a.area} ${a.pct} %`).join(', ');
  return `CPU profile (${name}): busy ${p.busyPct} % of the run; by caller (native and Node-internal time charged to the package or file that called it): ${owners}; self time by area: ${areas}; top functions: ${fns}`;
}

export function jsonLine(r: ScenarioReport): string {
  const brief = (m: Measured) => ({
    connections: m.connections,
    throughput2xx: m.result.throughput,
    ok: m.result.ok,
    p50: m.result.latencyMs.p50,
    p99: m.result.latencyMs.p99,
    statuses: m.result.statuses,
    errors: m.result.errors,
    timeouts: m.result.timeouts,
    peakRssMb: m.rssMb,
    ...(m.cpuMsPerRequest ? { cpuMsPerRequest: m.cpuMsPerRequest } : {}),
  });
  return JSON.stringify({
    scenario: r.scenario,
    title: r.title,
    runs: Object.fromEntries(r.rows.map((row) => [`${row.system}, ${row.m.connections} connections`, brief(row.m)])),
    checks: r.checks,
    ...(r.machineLoad ? { machineLoad: r.machineLoad } : {}),
    ...(r.details ? { details: r.details } : {}),
  });
}

function table(reports: ScenarioReport[], allTargets: Target[]): string {
  const rows: string[] = [
    '| # | scenario | system | conns | 2xx/s | p50 ms | p95 ms | p99 ms | non-2xx / errors | peak RSS MB |',
    '|---|---|---|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const r of reports) {
    for (const { system, m, names } of r.rows) {
      const mem = names.filter((n) => m.rssMb[n] !== undefined).map((n) => `${n} ${m.rssMb[n]}`).join(', ');
      const l = m.result.latencyMs;
      rows.push(`| ${r.scenario} | ${r.title} | ${system} | ${m.connections} | ${m.result.throughput} | ${l.p50} | ${l.p95} | ${l.p99} | ${m.result.non2xx} / ${m.result.errors + m.result.timeouts} | ${mem} |`);
    }
  }
  rows.push('', '### Targets', '', '| target | value | goal | met | how |', '|---|---:|---|---|---|');
  for (const t of allTargets) rows.push(`| \`${t.target}\` | ${t.value} | ${t.info ? 'none (information)' : `${t.op} ${t.goal}`} | ${t.info ? '' : t.met ? 'yes' : '**no**'} | ${t.how} |`);
  const cpus = reports.flatMap((r) => (r.cpu ? [r.cpu] : []));
  if (cpus.length) {
    rows.push('', '### CPU per request: the API beside its floor', '', '| scenario | API ms/request | floor ms/request | floor with the contract\'s writes, ms/request | API profile, top five by package (by caller) | floor profile, top five by package (by caller) |', '|---|---:|---:|---:|---|---|');
    for (const c of cpus) rows.push(`| ${c.scenario} | ${c.apiMsPerRequest ?? 'n/a'} | ${c.floorMsPerRequest ?? 'n/a'} | ${c.writesFloorMsPerRequest ?? 'n/a'} | ${c.apiTop5.join(', ') || 'n/a'} | ${c.floorTop5.join(', ') || 'n/a'} |`);
  }
  const checks = reports.flatMap((r) => r.checks.map((c) => ({ ...c, scenario: r.scenario })));
  if (checks.length) {
    rows.push('', '### Checks', '', '| # | check | result | pass |', '|---|---|---|---|');
    for (const c of checks) rows.push(`| ${c.scenario} | ${c.name} | ${c.value} | ${c.pass ? 'yes' : '**no**'} |`);
  }
  rows.push(
    '',
    '### Diagnostics',
    '',
    'Sampled during each measured run: CPU milliseconds per answered request per process (Redis server included); mean number of PostgreSQL backends waiting on a row lock, idle inside a transaction (waiting for the client) and waiting on WAL; what the lock holders were doing; event-loop delay of the API and worker (monitorEventLoopDelay, 5 ms resolution included); BullMQ job wait and run times; V8 CPU profiles of the API and worker over the whole scenario.',
    '',
  );
  for (const r of reports) {
    rows.push(`#### ${r.scenario}: ${r.title}`, '');
    if (r.machineLoad) rows.push(`- **machine**: load average ${r.machineLoad.loadStart} at the start, ${r.machineLoad.loadEnd} at the end; both cores ${r.machineLoad.busyPct} % busy on average (every process of the machine, other users' included), steal ${r.machineLoad.stealPct} %`);
    for (const d of r.diagnostics) rows.push(`- ${d}`);
    rows.push('');
  }
  return rows.join('\n');
}

/** Replaces the part of a document between `<!-- NAME:start -->` and `<!-- NAME:end -->`, or appends it. */
export function replaceSection(doc: string, name: string, content: string): string {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const block = `${start}\n${content}\n${end}`;
  const i = doc.indexOf(start);
  const j = doc.indexOf(end);
  if (i >= 0 && j > i) return doc.slice(0, i) + block + doc.slice(j + end.length);
  return `${doc.trimEnd()}\n\n${block}\n`;
}

const HEADER = '# Benchmark results\n\nWritten by `npm run bench` (scenarios and targets) and `npm run bench -- --soak` (memory soak); bench/analysis.md is copied in below.\n';

/** Rewrites one section of bench/RESULTS.md (each benchmark owns its own), leaving the others as they are. */
export function writeResultsSection(name: string, content: string): void {
  const path = repoPath('bench/RESULTS.md');
  const doc = existsSync(path) ? readFileSync(path, 'utf8') : HEADER;
  writeFileSync(path, replaceSection(doc, name, content.trim()));
}

/** Writes the run into bench/RESULTS.md, replacing only its own section (scenarios or soak). */
export function writeResults(m: Record<string, string>, settings: string, reports: ScenarioReport[], soak: boolean): string {
  const path = repoPath('bench/RESULTS.md');
  let doc = existsSync(path) ? readFileSync(path, 'utf8') : HEADER;
  if (!doc.includes('<!-- scenarios:start -->') && !doc.includes('<!-- soak:start -->')) doc = HEADER;
  const machineTable = ['| nproc | CPU | memory | Node | PostgreSQL | Redis | run at |', '|---|---|---|---|---|---|---|', `| ${m.nproc} | ${m.cpu} | ${m.memory} | ${m.node} | ${m.postgresql} | ${m.redis} | ${m.date} |`].join('\n');
  const body = table(reports, reports.flatMap((r) => r.targets));
  if (soak) {
    doc = replaceSection(doc, 'soak', `## Memory soak\n\n${machineTable}\n\n${body}\n\nRSS sampled from /proc/<pid>/status every 2 s; growth compares the median of the 20-30 % window with the last 10 %.`);
  } else {
    doc = replaceSection(doc, 'scenarios', `## Scenarios\n\n${machineTable}\n\n${settings}\n\n${body}`);
    const analysisPath = repoPath('bench/analysis.md');
    if (existsSync(analysisPath)) doc = replaceSection(doc, 'analysis', readFileSync(analysisPath, 'utf8').trim());
  }
  writeFileSync(path, doc);
  return body;
}
