import { sql } from 'slonik';
import { z } from 'zod';
import { load, serviceProcs, verifySpec, withStack, type RunOptions } from '../lib/measure.ts';
import { cpuComparison, diagnose, infoTarget, target, type ScenarioReport } from '../lib/report.ts';
import { SERVICE_TUNING } from '../lib/tuning.ts';
import { interleaved, ROUNDS } from '../lib/interleave.ts';
import { FLOOR_SAME_WRITES, measureHello, startFloor } from './ceilings.ts';

const CONNECTIONS = 20;
const LIGHT = 2;
const PATH = '/v1/verify-nin/requery';

/**
 * Requery of one found verification (read, decrypt, answer; free) against its I/O floor (the same
 * token check, one Redis script, one primary-key SELECT, a decrypt and the same answer, in a bare
 * express app) and, for information, the hello-world ceiling and the floor that also writes what the
 * contract requires of a requery that returns a record (its audit event, committed before the answer).
 */
export async function scenarioRequery(o: RunOptions): Promise<ScenarioReport> {
  const hello = await measureHello(o, CONNECTIONS);
  const out = await withStack(o, 'requery', { env: SERVICE_TUNING }, async (stack) => {
    const org = await stack.createOrg({ units: 1000 });
    const made = await fetch(`${stack.apiUrl}/v1/verify-nin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.member.token}` },
      body: JSON.stringify({ nin: '23456789012', reason: 'corporate' }),
    });
    if (made.status !== 200) throw new Error(`could not create a verification to requery: ${made.status} ${await made.text()}`);
    const referenceId = ((await made.json()) as { data: { reference_id: string } }).data.reference_id;
    const body = JSON.stringify({ reference_id: referenceId });
    const answer = await fetch(`${stack.apiUrl}${PATH}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${org.member.token}` }, body });
    if (answer.status !== 200) throw new Error(`requery failed before the run: ${answer.status}`);
    const record = (await answer.json()) as { data: unknown };
    const spec = (connections: number, extra = {}) => ({ ...verifySpec(o, stack.apiUrl, org.member.token, connections, { body, ...extra }), path: PATH });
    const floorSpec = { connections: CONNECTIONS, path: PATH, token: org.member.token, body, record };
    const floorProc = await startFloor(o, 'requery', stack, floorSpec);
    const writesProc = await startFloor(o, 'requery', stack, floorSpec, { sameWrites: true }).catch(async (err) => {
      await floorProc.stop();
      throw err;
    });
    let floor, writes, m;
    try {
      [floor, writes, m] = await interleaved(o, [(x) => floorProc.measure(x), (x) => writesProc.measure(x), (x) => load({ ...spec(CONNECTIONS), ...x }, serviceProcs(stack), stack.databaseUrl, stack)]);
    } finally {
      await Promise.all([floorProc.stop(), writesProc.stop()]);
    }
    const light = await load(spec(LIGHT, { durationS: Math.max(3, Math.round(o.durationS / 2)), warmupS: 1 }), serviceProcs(stack), stack.databaseUrl, stack);
    const units = await stack.db.oneFirst(sql.type(z.object({ units: z.coerce.number() }))`SELECT units FROM wallets WHERE org_id = ${org.orgId}`);
    return { m, light, units, floor, writes };
  });
  const { m, light, units, floor, writes } = out;
  const p99Ratio = m.result.latencyMs.p99 / Math.max(0.001, floor.result.latencyMs.p99);
  const writesP99 = m.result.latencyMs.p99 / Math.max(0.001, writes.result.latencyMs.p99);
  return {
    scenario: 'requery',
    title: `requery (POST /v1/verify-nin/requery), ${CONNECTIONS} connections`,
    rows: [
      { system: 'ceiling: express hello-world', m: hello, names: ['hello', 'loader'] },
      { system: 'floor: requery floor (JWT, one Redis script, one SELECT, decrypt)', m: floor, names: ['floor', 'loader'] },
      { system: 'floor with the contract\'s writes: the requery floor + its audit-shaped row, committed', m: writes, names: [FLOOR_SAME_WRITES, 'loader'] },
      { system: 'service (API + worker)', m, names: ['api', 'worker', 'loader'] },
      { system: 'service, light', m: light, names: ['api', 'worker'] },
    ],
    targets: [
      infoTarget('requery_vs_hello_throughput', m.result.throughput / Math.max(0.001, hello.result.throughput), `requery ${m.result.throughput} / hello ${hello.result.throughput} 2xx/s at ${CONNECTIONS} connections.`),
      // The goals are measured against the floor that does the same writes (a fair baseline does the
      // same work minus what is measured); the bare floor, which skips them, is printed for information.
      target('requery_vs_same_writes_floor_throughput', {
        value: m.result.throughput / Math.max(0.001, writes.result.throughput),
        goal: 1.0,
        op: '>=',
        how: `requery ${m.result.throughput} / floor with its audit row ${writes.result.throughput} 2xx/s at ${CONNECTIONS} connections, measured in ${ROUNDS} alternating rounds each; met also needs requery_vs_same_writes_floor_p99 <= 1.0 (${Math.round(writesP99 * 1000) / 1000}).`,
        runs: [['requery', m.result], ['floor with its audit row', writes.result]],
        also: writesP99 <= 1.0,
      }),
      target('requery_vs_same_writes_floor_p99', {
        value: writesP99,
        goal: 1.0,
        op: '<=',
        how: `requery ${m.result.latencyMs.p99} ms / floor with its audit row ${writes.result.latencyMs.p99} ms p99 of 2xx at ${CONNECTIONS} connections.`,
        runs: [['requery', m.result], ['floor with its audit row', writes.result]],
      }),
      infoTarget('requery_vs_floor_throughput', m.result.throughput / Math.max(0.001, floor.result.throughput), `requery ${m.result.throughput} / bare floor ${floor.result.throughput} 2xx/s at ${CONNECTIONS} connections (p99 ${Math.round(p99Ratio * 1000) / 1000}x).`),
      infoTarget('requery_vs_floor_p99', p99Ratio, `requery ${m.result.latencyMs.p99} ms / bare floor ${floor.result.latencyMs.p99} ms p99 of 2xx.`),
    ],
    checks: [{ name: 'all 200, nothing charged by a requery', pass: m.result.non2xx === 0 && light.result.non2xx === 0 && units === 999, value: `non-2xx ${m.result.non2xx + light.result.non2xx}, units ${units} (one live verification: 999)` }],
    diagnostics: [diagnose('service', m), diagnose(`service, light (${LIGHT} connections)`, light), diagnose('requery floor', floor), diagnose('requery floor with its audit row', writes), diagnose('hello-world', hello)].flat(),
    cpu: cpuComparison('requery', m, floor, { m: writes, name: FLOOR_SAME_WRITES }),
  };
}
