import { sql } from 'slonik';
import { z } from 'zod';
import type { LoadSpec } from '../load.ts';
import { interleaved, ROUNDS } from '../lib/interleave.ts';
import { load, serviceProcs, verifySpec, withStack, type Measured, type RunOptions } from '../lib/measure.ts';
import { diagnose, target, type ScenarioReport } from '../lib/report.ts';
import type { BenchStack, JobTimings } from '../lib/stack.ts';
import { SERVICE_TUNING, UPSTREAM_LATENCY_MS } from '../lib/tuning.ts';
import { measureBullmqNoop } from './ceilings.ts';

const SATURATED = 200;
const LIGHT = 10;

/**
 * Live verifications through the queue (1 API + 1 worker process) against the same service with
 * the lookup run in the API process (LOOKUP_INLINE, 1 API process): the same auth, rate limits,
 * encryption, verification row, hold and capture, logging, admission and authority limits, so the
 * difference is the queue. Both stacks run side by side and are measured in turns (three rounds
 * each, lib/interleave.ts), saturated (200 connections) then light (10), followed by the BullMQ
 * no-op ceiling.
 */
export async function scenarioLive(o: RunOptions): Promise<ScenarioReport> {
  const opts = { simLatencyMs: UPSTREAM_LATENCY_MS, env: SERVICE_TUNING };
  const out = await withStack(o, 'inline', { ...opts, env: { ...SERVICE_TUNING, LOOKUP_INLINE: 'true' }, workers: false }, (inline) =>
    withStack(o, 'queued', opts, async (queued) => {
      const iOrg = await inline.createOrg({ units: 10_000_000 });
      const qOrg = await queued.createOrg({ units: 10_000_000 });
      const live = { bodyKind: 'random-live-nin' as const };
      const run = (s: BenchStack, token: string, connections: number) => (x: Partial<LoadSpec>) => load({ ...verifySpec(o, s.apiUrl, token, connections, live), ...x }, serviceProcs(s), s.databaseUrl, s);
      // The queued side's rounds each end with its queue drained, so no backlog runs into the next round.
      const drained = (measure: (x: Partial<LoadSpec>) => Promise<Measured>) => async (x: Partial<LoadSpec>) => {
        const m = await measure(x);
        await queued.settleQueues(30_000);
        return m;
      };
      // Inline and queued in turns (three rounds each, as the fixture and requery scenarios do): a
      // machine that slows down during the run then slows both sides, not the one measured second.
      const t0 = Date.now();
      const [i200, q200] = await interleaved(o, [run(inline, iOrg.member.token, SATURATED), drained(run(queued, qOrg.member.token, SATURATED))]);
      const jobs = await queued.jobTimings('lookups', t0 + o.warmupS * 1000);
      const t1 = Date.now();
      const [i10, q10] = await interleaved(o, [run(inline, iOrg.member.token, LIGHT), drained(run(queued, qOrg.member.token, LIGHT))]);
      const jobsLight = await queued.jobTimings('lookups', t1 + o.warmupS * 1000);
      const noop = await measureBullmqNoop(o);
      const ledgers = { inline: await ledgerCheck(inline, iOrg.orgId), queued: await ledgerCheck(queued, qOrg.orgId) };
      return { i200, q200, i10, q10, jobs, jobsLight, noop, ledgers };
    }),
  );
  const { i200, q200, i10, q10, jobs, jobsLight, noop, ledgers } = out;
  const thr = (m: Measured) => m.result.throughput;
  const p99 = (m: Measured) => m.result.latencyMs.p99;
  const names = ['api', 'worker', 'loader'];
  return {
    scenario: 'live',
    title: `live verifications, upstream ${UPSTREAM_LATENCY_MS} ms`,
    rows: [
      { system: 'inline (1 API process)', m: i200, names },
      { system: 'queued (API + worker)', m: q200, names },
      { system: 'inline (1 API process)', m: i10, names },
      { system: 'queued (API + worker)', m: q10, names },
    ],
    targets: [
      target('live_vs_inline_throughput', {
        value: thr(q200) / Math.max(0.001, thr(i200)),
        goal: 0.85,
        op: '>=',
        how: `queued ${thr(q200)} / inline ${thr(i200)} 2xx/s at ${SATURATED} connections, measured in ${ROUNDS} alternating rounds each.`,
        runs: [['queued', q200.result], ['inline', i200.result]],
      }),
      target('live_vs_inline_p99', {
        value: p99(q200) / Math.max(0.001, p99(i200)),
        goal: 1.5,
        op: '<=',
        how: `queued ${p99(q200)} ms / inline ${p99(i200)} ms p99 of 2xx at ${SATURATED} connections.`,
        runs: [['queued', q200.result], ['inline', i200.result]],
      }),
      target('live_added_p99_ms', {
        value: p99(q10) - p99(i10),
        goal: 10,
        op: '<=',
        how: `queued ${p99(q10)} ms - inline ${p99(i10)} ms p99 of 2xx at ${LIGHT} connections, measured in ${ROUNDS} alternating rounds each.`,
        runs: [['queued', q10.result], ['inline', i10.result]],
      }),
    ],
    checks: Object.entries(ledgers).map(([side, l]) => ({ name: `${side}: one debit per found verification, balance = sum of ledger lines, nothing left held`, pass: l.ok, value: JSON.stringify(l) })),
    diagnostics: [
      `**ceiling, BullMQ no-op round trip** (${noop.callers} callers, worker concurrency 50, separate processes): ${noop.throughput} round trips/s, p50 ${noop.p50} ms, p99 ${noop.p99} ms${noop.lost ? `, ${noop.lost} completions never seen (10 s)` : ''}`,
      ...diagnose(`inline, ${SATURATED} connections`, i200),
      ...diagnose(`queued, ${SATURATED} connections`, q200),
      jobLine(`queued lookup jobs, ${SATURATED} connections`, jobs),
      ...diagnose(`inline, ${LIGHT} connections`, i10),
      ...diagnose(`queued, ${LIGHT} connections`, q10),
      jobLine(`queued lookup jobs, ${LIGHT} connections`, jobsLight),
    ],
    details: { noop, jobs, jobsLight, ledgers },
  };
}

function jobLine(label: string, j: JobTimings): string {
  return `**${label}** (BullMQ timestamps, ${j.jobs} jobs): added -> started p50 ${j.waitMs.p50} / p99 ${j.waitMs.p99} ms, started -> finished p50 ${j.runMs.p50} / p99 ${j.runMs.p99} ms (the upstream answers in ${UPSTREAM_LATENCY_MS} ms)`;
}

/** Every found live verification debited once; the balance is the sum of the ledger; no unit left held. */
export async function ledgerCheck(stack: BenchStack, orgId: number) {
  const row = await stack.db.one(sql.type(z.object({ units: z.coerce.number(), reserved: z.coerce.number(), ledger: z.coerce.number(), debits: z.coerce.number(), found: z.coerce.number() }))`
    SELECT w.units, w.reserved,
      (SELECT COALESCE(sum(units_delta), 0) FROM wallet_transactions t WHERE t.org_id = w.org_id) AS ledger,
      (SELECT count(*) FROM wallet_transactions t WHERE t.org_id = w.org_id AND kind = 'verification' AND units_delta <> 0) AS debits,
      (SELECT count(*) FROM verifications v WHERE v.org_id = w.org_id AND status = 'found' AND NOT fixture) AS found
    FROM wallets w WHERE w.org_id = ${orgId}`);
  return { ok: row.units === row.ledger && row.debits === row.found && row.reserved === 0, ...row };
}
