import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'slonik';
import { z } from 'zod';
import { signPaystackBody } from '../../src/adapters/payment-processor/signature.ts';
import { load, serviceProcs, tmp, withStack, type RunOptions } from '../lib/measure.ts';
import { sleep } from '../lib/proc.ts';
import { diagnose, type ScenarioReport } from '../lib/report.ts';
import { BENCH_PAYSTACK_SECRET } from '../lib/stack.ts';
import { SERVICE_TUNING } from '../lib/tuning.ts';

/**
 * Signed top-up webhooks, each paid reference delivered five times (exact retries and re-serialised
 * copies) in a fixed shuffle: every reference must be credited exactly once, with no 5xx.
 */
export async function scenarioWebhookStorm(ro: RunOptions): Promise<ScenarioReport> {
  return withStack(ro, 'webhooks', { webhookMode: 'none', env: SERVICE_TUNING }, async (stack) => {
    const REFERENCES = 200;
    const WEBHOOKS = 1000;
    const connections = 50;
    const org = await stack.createOrg();
    const references: string[] = [];
    for (let i = 0; i < REFERENCES; i++) {
      const res = await fetch(`${stack.apiUrl}/v1/topup/initialize`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${org.admin.token}` },
        body: 'units=100',
      });
      const body = (await res.json()) as { reference?: string };
      if (res.status !== 200 || !body.reference) throw new Error(`topup/initialize failed: ${res.status} ${JSON.stringify(body)}`);
      references.push(body.reference);
    }
    const events: string[][] = [];
    for (const ref of references) {
      const paid = await fetch(`${stack.paymentUrl}/__sim/transactions/${ref}/pay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"webhook":"none"}' });
      if (paid.status !== 200) throw new Error(`simulator pay failed for ${ref}: ${paid.status}`);
      const verified = (await (await fetch(`${stack.paymentUrl}/transaction/verify/${ref}`, { headers: { authorization: `Bearer ${BENCH_PAYSTACK_SECRET}` } })).json()) as { data: unknown };
      const event = { event: 'charge.success', data: verified.data };
      // Five deliveries per reference: three byte-identical retries and two re-serialised copies
      // (same event, other bytes: another digest), as a processor's retries and replays would be.
      const exact = JSON.stringify(event);
      events.push([exact, exact, exact, JSON.stringify(event, null, 1), JSON.stringify({ data: event.data, event: event.event })]);
    }
    const bodies = events.flat().map((body) => ({ body, headers: { 'x-paystack-signature': signPaystackBody(body, BENCH_PAYSTACK_SECRET) } }));
    // A fixed shuffle, so duplicates race each other rather than arrive in a row.
    let seed = 42;
    for (let i = bodies.length - 1; i > 0; i--) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const j = seed % (i + 1);
      [bodies[i], bodies[j]] = [bodies[j]!, bodies[i]!];
    }
    const file = join(tmp, 'webhooks.json');
    writeFileSync(file, JSON.stringify(bodies.slice(0, WEBHOOKS)));
    const o = await load(
      { url: stack.apiUrl, method: 'POST', path: '/v1/webhooks/paystack', headers: { 'content-type': 'application/json' }, connections, amount: WEBHOOKS, bodiesFile: file },
      serviceProcs(stack),
      stack.databaseUrl,
      stack,
    );
    const settleStarted = Date.now();
    const counts = await stack.settleQueues(60_000);
    // Credits finish asynchronously: wait (bounded) until every reference is credited.
    let credited = 0;
    for (let i = 0; i < 150; i++) {
      credited = await stack.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM topups WHERE org_id = ${org.orgId} AND status = 'credited'`);
      if (credited === REFERENCES) break;
      await sleep(200);
    }
    const settleMs = Date.now() - settleStarted;
    const perRef = await stack.db.any(sql.type(z.object({ reference: z.string(), n: z.coerce.number() }))`
      SELECT t.reference, count(w.id) AS n FROM topups t
      LEFT JOIN wallet_transactions w ON w.reference = t.reference AND w.kind = 'topup'
      WHERE t.org_id = ${org.orgId} GROUP BY t.reference`);
    const wrong = perRef.filter((r) => r.n !== 1);
    const units = await stack.db.oneFirst(sql.type(z.object({ units: z.coerce.number() }))`SELECT units FROM wallets WHERE org_id = ${org.orgId}`);
    const exactlyOnce = wrong.length === 0 && perRef.length === REFERENCES && units === REFERENCES * 100;
    return {
      scenario: 'webhooks',
      title: `top-up webhook storm: ${WEBHOOKS} signed webhooks for ${REFERENCES} references, ${connections} connections`,
      rows: [{ system: 'service (API + worker)', m: o, names: ['api', 'worker', 'loader'] }],
      targets: [],
      checks: [
        { name: 'every paid reference credited exactly once', pass: exactlyOnce, value: `${perRef.length - wrong.length}/${REFERENCES} once, balance ${units}` },
        { name: 'no 5xx, no errors', pass: !Object.keys(o.result.statuses).some((s) => s.startsWith('5')) && o.result.errors === 0, value: JSON.stringify(o.result.statuses) },
      ],
      diagnostics: [diagnose('service', o)].flat(),
      details: { credited, settleMs, queues: counts, wrong: wrong.slice(0, 5) },
    };
  });
}
