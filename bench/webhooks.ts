import { availableParallelism, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { sleep } from './lib/proc.ts';
import { writeResultsSection } from './lib/report.ts';
import { startBenchStack, type Account } from './lib/stack.ts';
import { atMost, percentile, type Target } from './lib/tenant-measure.ts';

/**
 * `npm run bench:webhooks [-- --events N]`: signed webhook deliveries (issue 32) through one API and one
 * worker process, to the identity simulator's sandbox receiver (`/sandbox/hooks/{name}`). An event is a
 * `ping` (POST /v1/webhook-endpoints/{id}/test: written in the API's transaction like every event).
 * Its latency is the receiver's `received_at` minus the event's `created_at` (set in the transaction
 * just before the INSERT, so it counts the commit too: an upper bound of commit to receipt); both
 * clocks are this machine's, in milliseconds.
 * - webhook_delivery_p50_ms: events one at a time (the next once the last was received); goal <= 50.
 * - webhook_bystander_p95_ratio: organisation B's events (5 a second) while A's receiver holds every
 *   delivery past WEBHOOK_TIMEOUT_MS (A has a backlog of events, retried), B's p95 over its p95 alone;
 *   goal <= 1.25.
 * Prints one line per target and writes the "webhooks-delivery" section of bench/RESULTS.md.
 */
const { values } = parseArgs({ options: { events: { type: 'string', default: '100' } } });
const EVENTS = Number(values.events);
const B_RATE = 5;
const A_BACKLOG = 200;
const started = new Date();

type Hook = { received_at: string; headers: Record<string, string>; body: string };

const stack = await startBenchStack({
  // The production timeout (10 s) is what a dead receiver costs; A's retries come back quickly so
  // its endpoint always has deliveries due.
  // The events are pings, many per endpoint: beyond the hourly cap of test pings.
  env: { WEBHOOK_TIMEOUT_MS: '10000', WEBHOOK_RETRY_FIRST_MS: '1000', WEBHOOK_RETRY_MAX_MS: '2000', WEBHOOK_PINGS_PER_HOUR: '100000' },
});
const targets: Target[] = [];
const facts: Record<string, unknown> = {};
const statuses: Record<string, number> = {};
const count = (s: number) => (statuses[s] = (statuses[s] ?? 0) + 1);

async function api(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${stack.apiUrl}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function endpoint(admin: Account, name: string, query = ''): Promise<string> {
  const r = await api(admin.token, 'POST', '/webhook-endpoints', { url: `${stack.identityUrl}/sandbox/hooks/${name}${query}`, events: ['ping'], description: 'bench' });
  if (r.status !== 201) throw new Error(`endpoint refused: ${r.status} ${JSON.stringify(r.body)}`);
  return String(r.body.id);
}

async function ping(admin: Account, id: string): Promise<string> {
  const r = await api(admin.token, 'POST', `/webhook-endpoints/${id}/test`);
  count(r.status);
  if (r.status !== 202) throw new Error(`ping refused: ${r.status}`);
  return String(r.body.event_id);
}

/** Latency (ms) of each event received at `name`, by event id: received_at - created_at. */
async function latencies(name: string): Promise<Map<string, number>> {
  const hooks = ((await (await fetch(`${stack.identityUrl}/sandbox/hooks/${name}`)).json()) as { data: Hook[] }).data;
  const out = new Map<string, number>();
  for (const h of hooks) {
    const e = JSON.parse(h.body) as { id: string; created_at: string };
    // The first receipt counts (the list is newest first).
    out.set(e.id, Date.parse(h.received_at) - Date.parse(e.created_at));
  }
  return out;
}

async function receivedAll(name: string, ids: string[], timeoutMs = 120_000): Promise<number[]> {
  for (const deadline = Date.now() + timeoutMs; ; await sleep(20)) {
    const got = await latencies(name);
    if (ids.every((id) => got.has(id))) return ids.map((id) => got.get(id)!);
    if (Date.now() > deadline) throw new Error(`${ids.filter((id) => !got.has(id)).length} of ${ids.length} events not received at ${name} within ${timeoutMs} ms`);
  }
}

/** B's events at B_RATE a second, `n` of them, each on a receiver name of its own batch (the receiver keeps 200 per name). */
async function paced(admin: Account, id: string, name: string, n: number): Promise<number[]> {
  const ids: string[] = [];
  const t0 = Date.now();
  for (let i = 0; i < n; i++) {
    await sleep(Math.max(0, t0 + (i * 1000) / B_RATE - Date.now()));
    ids.push(await ping(admin, id));
  }
  return receivedAll(name, ids);
}

try {
  const a = await stack.createOrg();
  const b = await stack.createOrg();
  const tag = stack.prefix.replace(/[^A-Za-z0-9]/g, '');

  // One at a time.
  const oneName = `${tag}-one`;
  const oneId = await endpoint(b.admin, oneName);
  await receivedAll(oneName, [await ping(b.admin, oneId)]); // warm-up: JIT, pools, the LISTEN connection
  const one: number[] = [];
  for (let i = 0; i < EVENTS; i++) one.push(...(await receivedAll(oneName, [await ping(b.admin, oneId)])));
  const p50 = percentile(one, 50);
  targets.push(atMost('webhook_delivery_p50_ms', p50, 50, { note: `${EVENTS} pings one at a time, created_at (in the transaction) to the receiver's received_at; p95 ${percentile(one, 95)} ms` }));

  // B alone, then B while A's receiver times out on every delivery.
  const aloneName = `${tag}-b-alone`;
  const alone = await paced(b.admin, await endpoint(b.admin, aloneName), aloneName, EVENTS);
  const loadAlone = loadavg()[0]!;
  const deadId = await endpoint(a.admin, `${tag}-a-dead`, '?delay_ms=60000');
  for (let i = 0; i < A_BACKLOG; i++) await ping(a.admin, deadId);
  const duringName = `${tag}-b-during`;
  const during = await paced(b.admin, await endpoint(b.admin, duringName), duringName, EVENTS);
  const loadDuring = loadavg()[0]!;
  const aTries = ((await (await fetch(`${stack.identityUrl}/sandbox/hooks/${tag}-a-dead`)).json()) as { data: Hook[] }).data.length;
  const ratio = percentile(during, 95) / percentile(alone, 95);
  targets.push(
    atMost('webhook_bystander_p95_ratio', ratio, 1.25, {
      note: `B p95 ${percentile(during, 95)} ms while A's receiver held every delivery (${aTries} tries reached it), ${percentile(alone, 95)} ms alone; ${EVENTS} events at ${B_RATE}/s each; load1 ${loadAlone.toFixed(2)} alone, ${loadDuring.toFixed(2)} during`,
    }),
  );
  Object.assign(facts, {
    oneAtATimeMs: { p50, p95: percentile(one, 95), max: Math.max(...one) },
    bAloneMs: { p50: percentile(alone, 50), p95: percentile(alone, 95), max: Math.max(...alone) },
    bDuringMs: { p50: percentile(during, 50), p95: percentile(during, 95), max: Math.max(...during) },
    aBacklog: A_BACKLOG,
    aTriesReceived: aTries,
    statuses,
  });
} finally {
  await stack.stop();
}

for (const t of targets) process.stdout.write(`${JSON.stringify({ target: t.target, value: t.value, goal: t.goal, met: t.met })}\n`);
process.stdout.write(`${JSON.stringify({ scenario: 'webhooks-delivery', ...facts })}\n`);
const machine = { cores: availableParallelism(), load1: Math.round(loadavg()[0]! * 100) / 100 };
writeResultsSection(
  'webhooks-delivery',
  `## Signed webhook deliveries (\`npm run bench:webhooks\`, issue 32)

Run ${started.toISOString()}, ${machine.cores} cores (load ${machine.load1} at the end), one API and one worker process,
the identity simulator's sandbox receiver; ${EVENTS} events per measured part. The machine was shared with other
sessions' tests while this ran (load averages in the notes): the absolute milliseconds carry that noise.

| target | value | goal | |
|---|---|---|---|
${targets.map((t) => `| ${t.target} | ${t.value} | <= ${t.goal} | ${t.met ? 'met' : '**missed**'} |`).join('\n')}

${targets.map((t) => `- ${t.target}: ${t.note}`).join('\n')}

\`\`\`json
${JSON.stringify(facts)}
\`\`\``,
);
process.exitCode = targets.every((t) => t.met) && Object.keys(statuses).every((s) => s === '202') ? 0 : 1;
