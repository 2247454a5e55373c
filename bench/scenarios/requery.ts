import { sql } from 'slonik';
import { z } from 'zod';
import { load, serviceProcs, verifySpec, withStack, type RunOptions } from '../lib/measure.ts';
import { diagnose, target, type ScenarioReport } from '../lib/report.ts';
import { SERVICE_TUNING } from '../lib/tuning.ts';
import { measureHello } from './ceilings.ts';

const CONNECTIONS = 20;
const LIGHT = 2;

/** Requery of one found verification (read, decrypt, answer; free) against the hello-world ceiling. */
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
    const spec = (connections: number, extra = {}) => ({ ...verifySpec(o, stack.apiUrl, org.member.token, connections, { body: JSON.stringify({ reference_id: referenceId }), ...extra }), path: '/v1/verify-nin/requery' });
    const m = await load(spec(CONNECTIONS), serviceProcs(stack), stack.databaseUrl, stack);
    const light = await load(spec(LIGHT, { durationS: Math.max(3, Math.round(o.durationS / 2)), warmupS: 1 }), serviceProcs(stack), stack.databaseUrl, stack);
    const units = await stack.db.oneFirst(sql.type(z.object({ units: z.coerce.number() }))`SELECT units FROM wallets WHERE org_id = ${org.orgId}`);
    return { m, light, units };
  });
  const { m, light, units } = out;
  return {
    scenario: 'requery',
    title: `requery (POST /v1/verify-nin/requery), ${CONNECTIONS} connections`,
    rows: [
      { system: 'ceiling: express hello-world', m: hello, names: ['hello', 'loader'] },
      { system: 'service (API + worker)', m, names: ['api', 'worker', 'loader'] },
      { system: 'service, light', m: light, names: ['api', 'worker'] },
    ],
    targets: [
      target('requery_vs_hello_throughput', {
        value: m.result.throughput / Math.max(0.001, hello.result.throughput),
        goal: 0.12,
        op: '>=',
        how: `requery ${m.result.throughput} / hello ${hello.result.throughput} 2xx/s at ${CONNECTIONS} connections.`,
        runs: [['requery', m.result], ['hello', hello.result]],
      }),
    ],
    checks: [{ name: 'all 200, nothing charged by a requery', pass: m.result.non2xx === 0 && light.result.non2xx === 0 && units === 999, value: `non-2xx ${m.result.non2xx + light.result.non2xx}, units ${units} (one live verification: 999)` }],
    diagnostics: [diagnose('service', m), diagnose(`service, light (${LIGHT} connections)`, light), diagnose('hello-world', hello)].flat(),
  };
}
