import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadResult } from '../load.ts';
import { serviceProcs, tmp, verifySpec, withStack, type RunOptions } from '../lib/measure.ts';
import { MemorySampler, repoPath, spawnNode } from '../lib/proc.ts';
import type { ScenarioReport } from '../lib/report.ts';
import { SERVICE_TUNING, UPSTREAM_LATENCY_MS } from '../lib/tuning.ts';

/** Live verifications at 50 connections for a long time: API and worker RSS must not keep growing. */
export async function soak(ro: RunOptions, seconds: number): Promise<ScenarioReport> {
  return withStack(ro, 'soak', { simLatencyMs: UPSTREAM_LATENCY_MS, env: SERVICE_TUNING }, async (stack) => {
    const org = await stack.createOrg({ units: 10_000_000 });
    const file = join(tmp, 'soak.json');
    const spec = verifySpec(ro, stack.apiUrl, org.member.token, 50, { bodyKind: 'random-live-nin', durationS: seconds, warmupS: 0 });
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
      rows: [{ system: 'service (API + worker)', m: { connections: 50, result, rssMb }, names: ['api', 'worker'] }],
      targets: [],
      checks: Object.entries(growth).map(([name, g]) => ({ name: `${name} RSS growth <= 10%`, pass: g.growthPct <= 10, value: `${g.earlyMb} -> ${g.lateMb} MB (${g.growthPct}%)` })),
      diagnostics: [],
      details: { growth },
    };
  });
}
