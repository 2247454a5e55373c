import { execFileSync } from 'node:child_process';
import { sql } from 'slonik';
import { z } from 'zod';
import { load, serviceProcs, verifySpec, withStack, type RunOptions } from '../lib/measure.ts';
import { repoPath } from '../lib/proc.ts';
import { cpuComparison, diagnose, infoTarget, target, type ScenarioReport } from '../lib/report.ts';
import type { BenchStack } from '../lib/stack.ts';
import { SERVICE_TUNING } from '../lib/tuning.ts';
import { interleaved, ROUNDS } from '../lib/interleave.ts';
import { FLOOR_SAME_WRITES, measureHello, startFloor } from './ceilings.ts';

const CONNECTIONS = 100;

/**
 * Fixture verifications (no upstream call, no debit, a zero ledger line committed before the
 * answer) against their I/O floor (the same token check and Redis script, one INSERT ... RETURNING
 * of a ledger-shaped row, the fixture record as the answer, in a bare express app) and, for
 * information, the hello-world ceiling, at the same connection count.
 */
export async function scenarioFixture(o: RunOptions): Promise<ScenarioReport> {
  const hello = await measureHello(o, CONNECTIONS);
  const out = await withStack(o, 'fixture', { env: SERVICE_TUNING }, async (stack) => {
    const org = await stack.createOrg({ units: 1000 });
    const body = JSON.stringify({ nin: '12345678901', reason: 'corporate' });
    const first = await fetch(`${stack.apiUrl}/v1/verify-nin`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${org.member.token}` }, body });
    if (first.status !== 200) throw new Error(`fixture verification failed before the run: ${first.status}`);
    const { reference_id: _, ...record } = ((await first.json()) as { data: Record<string, unknown> }).data;
    const floorSpec = { connections: CONNECTIONS, path: '/v1/verify-nin', token: org.member.token, body, record };
    const floorProc = await startFloor(o, 'fixture', stack, floorSpec);
    const writesProc = await startFloor(o, 'fixture', stack, floorSpec, { sameWrites: true }).catch(async (err) => {
      await floorProc.stop();
      throw err;
    });
    let floor, writes, m;
    try {
      [floor, writes, m] = await interleaved(o, [
        (x) => floorProc.measure(x),
        (x) => writesProc.measure(x),
        (x) => load({ ...verifySpec(o, stack.apiUrl, org.member.token, CONNECTIONS, { body }), ...x }, serviceProcs(stack), stack.databaseUrl, stack),
      ]);
    } finally {
      await Promise.all([floorProc.stop(), writesProc.stop()]);
    }
    return { m, floor, writes, durability: await durability(stack, org.orgId) };
  });
  const { m, floor, writes, durability: d } = out;
  const p99Ratio = m.result.latencyMs.p99 / Math.max(0.001, floor.result.latencyMs.p99);
  const writesP99 = m.result.latencyMs.p99 / Math.max(0.001, writes.result.latencyMs.p99);
  return {
    scenario: 'fixture',
    title: `fixture verifications (POST /v1/verify-nin, 12345678901), ${CONNECTIONS} connections`,
    rows: [
      { system: 'ceiling: express hello-world', m: hello, names: ['hello', 'loader'] },
      { system: 'floor: fixture floor (JWT, one Redis script, one INSERT ... RETURNING)', m: floor, names: ['floor', 'loader'] },
      { system: 'floor with the contract\'s writes: the fixture floor + the sealed verification row in its statement', m: writes, names: [FLOOR_SAME_WRITES, 'loader'] },
      { system: 'service (API + worker)', m, names: ['api', 'worker', 'loader'] },
    ],
    targets: [
      infoTarget('fixture_vs_hello_throughput', m.result.throughput / Math.max(0.001, hello.result.throughput), `fixture ${m.result.throughput} / hello ${hello.result.throughput} 2xx/s at ${CONNECTIONS} connections.`),
      // The goals are measured against the floor that does the same writes (a fair baseline does the
      // same work minus what is measured); the bare floor, which skips them, is printed for information.
      target('fixture_vs_same_writes_floor_throughput', {
        value: m.result.throughput / Math.max(0.001, writes.result.throughput),
        goal: 1.0,
        op: '>=',
        how: `fixture ${m.result.throughput} / floor with the verification row ${writes.result.throughput} 2xx/s at ${CONNECTIONS} connections, measured in ${ROUNDS} alternating rounds each; met also needs fixture_vs_same_writes_floor_p99 <= 1.0 (${Math.round(writesP99 * 1000) / 1000}).${d.ok ? '' : ' Durability check failed: see Checks.'}`,
        runs: [['fixture', m.result], ['floor with the verification row', writes.result]],
        also: writesP99 <= 1.0 && d.ok,
      }),
      target('fixture_vs_same_writes_floor_p99', {
        value: writesP99,
        goal: 1.0,
        op: '<=',
        how: `fixture ${m.result.latencyMs.p99} ms / floor with the verification row ${writes.result.latencyMs.p99} ms p99 of 2xx at ${CONNECTIONS} connections.`,
        runs: [['fixture', m.result], ['floor with the verification row', writes.result]],
      }),
      infoTarget('fixture_vs_floor_throughput', m.result.throughput / Math.max(0.001, floor.result.throughput), `fixture ${m.result.throughput} / bare floor ${floor.result.throughput} 2xx/s at ${CONNECTIONS} connections (p99 ${Math.round(p99Ratio * 1000) / 1000}x).`),
      infoTarget('fixture_vs_floor_p99', p99Ratio, `fixture ${m.result.latencyMs.p99} ms / bare floor ${floor.result.latencyMs.p99} ms p99 of 2xx.`),
    ],
    checks: [
      {
        name: 'every ledger line committed with synchronous_commit on before the answer',
        pass: d.ok,
        value: `server ${d.server}, overrides for this database or role: ${d.overrides || 'none'}, the service's code sets it: ${d.codeSetsIt ? 'yes' : 'no'}; ${d.lines} fixture ledger lines for ${d.rows} fixture verifications`,
      },
      { name: 'every answer 2xx', pass: m.result.non2xx === 0 && m.result.errors === 0, value: JSON.stringify(m.result.statuses) },
    ],
    diagnostics: [diagnose('service', m), diagnose('fixture floor', floor), diagnose('fixture floor with the verification row', writes), diagnose('hello-world', hello)].flat(),
    cpu: cpuComparison('fixture', m, floor, { m: writes, name: FLOOR_SAME_WRITES }),
  };
}

/**
 * The answer follows the COMMIT of its transaction (runFixture awaits it), so a ledger line is
 * durable before its answer when synchronous_commit is on for the service's sessions: the server
 * setting, no override for the benchmark database or its role, and no SET of it in the code.
 */
async function durability(stack: BenchStack, orgId: number) {
  const server = await stack.db.oneFirst(sql.type(z.object({ s: z.string() }))`SELECT current_setting('synchronous_commit') AS s`);
  const overrides = (await stack.db.anyFirst(sql.type(z.object({ c: z.string() }))`
    SELECT array_to_string(setconfig, ',') AS c FROM pg_db_role_setting s
    LEFT JOIN pg_database d ON d.oid = s.setdatabase
    WHERE (d.datname = current_database() OR s.setdatabase = 0) AND array_to_string(setconfig, ',') LIKE '%synchronous_commit%'`)).join('; ');
  let codeSetsIt = false;
  try {
    execFileSync('grep', ['-rqi', 'synchronous_commit', repoPath('src'), repoPath('workers'), repoPath('migrations')]);
    codeSetsIt = true;
  } catch {
    // grep exits 1: not found.
  }
  const counts = await stack.db.one(sql.type(z.object({ lines: z.coerce.number(), rows: z.coerce.number() }))`
    SELECT (SELECT count(*) FROM wallet_transactions WHERE org_id = ${orgId} AND kind = 'fixture_verification') AS lines,
           (SELECT count(*) FROM verifications WHERE org_id = ${orgId} AND fixture) AS rows`);
  return { ok: server === 'on' && !overrides && !codeSetsIt && counts.lines === counts.rows && counts.rows > 0, server, overrides, codeSetsIt, ...counts };
}
