import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sleep } from '../../bench/lib/proc.ts';
import { waitFor } from '../setup/wait.ts';
import { pool, startChaosStack, type ChaosStack } from '../chaos/chaos-stack.ts';

// 1,000 webhook events delivered by real worker processes while they are
// SIGKILLed mid-delivery and while Redis is cut off: every event reaches its receiver at least once,
// and a second delivery of an event carries the same id and the same bytes.

const ENDPOINTS = 20;
const PER_ENDPOINT_EVENTS = 50; // 1,000 events; well under the sandbox receiver's 200 kept per name, duplicates included
// The receiver holds each request before answering, so a kill always finds deliveries in flight
// (received, not yet recorded as delivered): those must come again, with the same id.
const RECEIVER_DELAY_MS = 400;

type Hook = { received_at: string; headers: Record<string, string>; body: string };
const q = sql.type(z.object({ event_id: z.string() }));

let chaos: ChaosStack;
beforeAll(async () => {
  chaos = await startChaosStack({
    proxyRedis: true,
    // No worker yet: the events are written first, then the workers are started, killed and cut off.
    workerProcesses: 0,
    captureLogs: true,
    env: {
      RATE_LIMIT_PER_TOKEN: '1000000',
      RATE_LIMIT_PER_ORG: '1000000',
      // 50 pings per endpoint, beyond the hourly cap of test pings.
      WEBHOOK_PINGS_PER_HOUR: '1000',
      // Few sockets per process so the 1,000 deliveries outlast the cut and the kills.
      WEBHOOK_CONCURRENCY: '4',
      WEBHOOK_POLL_MS: '200',
      // The lease a killed worker leaves behind is WEBHOOK_TIMEOUT_MS + 10 s.
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_RETRY_FIRST_MS: '200',
      WEBHOOK_RETRY_MAX_MS: '1000',
    },
  });
});
afterAll(async () => chaos?.close());

it('When 1,000 webhook events are delivered while the workers are SIGKILLed mid-delivery and Redis is cut for 10 s, then every event reaches its receiver at least once and every duplicate carries the same id and body', async () => {
  const { stack } = chaos;
  const org = await stack.createOrg();
  const names = Array.from({ length: ENDPOINTS }, (_, i) => `chaos-${stack.config.REDIS_PREFIX.replace(/[^A-Za-z0-9]/g, '')}-${i}`.slice(0, 64));
  const endpointIds: string[] = [];
  for (const name of names) {
    const r = await stack.api('POST', '/v1/webhook-endpoints', {
      token: org.admin.token,
      json: { url: `${stack.identitySim.url}/sandbox/hooks/${name}?delay_ms=${RECEIVER_DELAY_MS}`, events: ['ping'], description: 'chaos receiver' },
    });
    expect(r.status).toBe(201);
    endpointIds.push(r.body.id as string);
  }

  // 1,000 events, each written by the API in its own transaction (the outbox).
  const expected = new Set<string>();
  await pool(
    Array.from({ length: ENDPOINTS * PER_ENDPOINT_EVENTS }, (_, i) => endpointIds[i % ENDPOINTS]!),
    10,
    async (id) => {
      const r = await stack.api('POST', `/v1/webhook-endpoints/${id}/test`, { token: org.admin.token });
      expect(r.status).toBe(202);
      expected.add(r.body.event_id as string);
    },
  );
  expect(expected.size).toBe(1000);

  // Every request any receiver got, accumulated across polls: event id -> the bodies it came with.
  const got = new Map<string, { bodies: string[]; headerIds: string[] }>();
  const seen = new Set<string>();
  const poll = async (): Promise<number> => {
    for (const name of names) {
      const res = await fetch(`${stack.identitySim.url}/sandbox/hooks/${name}`);
      const hooks = ((await res.json()) as { data: Hook[] }).data;
      for (const h of hooks) {
        // The receiver keeps each request as one object; identity of (time, headers, body) is one receipt.
        const key = `${name} ${h.received_at} ${h.headers['idverify-signature']} ${h.body}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const id = (JSON.parse(h.body) as { id: string }).id;
        const entry = got.get(id) ?? { bodies: [], headerIds: [] };
        entry.bodies.push(h.body);
        entry.headerIds.push(h.headers['idverify-event-id']!);
        got.set(id, entry);
      }
    }
    return got.size;
  };

  // Deliveries received by a receiver but still leased (not recorded as delivered) once the workers are dead:
  // each must be delivered again. Read after the kill, so nothing moves these rows meanwhile.
  const inFlightAfterKill = async (): Promise<string[]> => {
    await poll();
    const rows = await stack.db.any(q`SELECT event_id FROM webhook_deliveries WHERE status = 'pending' AND lease_until > now()`);
    return rows.map((r) => r.event_id).filter((id) => got.has(id));
  };

  await chaos.startWorker();
  await chaos.startWorker();
  await waitFor(async () => (await poll()) >= 50, { what: '50 events received', timeoutMs: 120_000, intervalMs: 100 });

  // Redis cut while deliveries go on: they wait in PostgreSQL, not in a queue, so receipts keep coming
  // during the cut, which lasts at least 10 s. (Two processes of WEBHOOK_CONCURRENCY sockets held
  // RECEIVER_DELAY_MS each deliver at most 20 a second: most of the 1,000 are left for the kills.)
  const before = await poll();
  chaos.redisProxy!.cut();
  const cutAt = Date.now();
  try {
    await waitFor(async () => (await poll()) >= before + 50, { what: 'deliveries received while Redis is cut', timeoutMs: 120_000, intervalMs: 100 });
    expect(chaos.redisProxy!.isCut).toBe(true);
    await sleep(Math.max(0, 10_000 - (Date.now() - cutAt)));
  } finally {
    chaos.redisProxy!.restore();
  }

  const mustRepeat = new Set<string>();
  const inFlight = sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending' AND lease_until > now()`;
  for (const more of [30, 100]) {
    const at = (await poll()) + more;
    await waitFor(async () => (await poll()) >= at, { what: `${at} events received`, timeoutMs: 120_000, intervalMs: 100 });
    // Kill as soon as a delivery is in flight; again after a restart if none had reached its receiver yet.
    let caught = 0;
    for (let k = 0; k < 10 && caught === 0; k++) {
      await waitFor(async () => (await stack.db.oneFirst(inFlight)) > 0, { what: 'deliveries in flight', timeoutMs: 60_000, intervalMs: 20 });
      await chaos.killWorkers();
      for (const id of await inFlightAfterKill()) {
        mustRepeat.add(id);
        caught++;
      }
      await chaos.startWorker({ waitReady: false });
      await chaos.startWorker({ waitReady: false });
    }
    expect(caught).toBeGreaterThan(0);
  }

  // Generous: killed leases expire after WEBHOOK_TIMEOUT_MS + 10 s, then the deliveries go again.
  const delivered = sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'delivered'`;
  await waitFor(async () => (await poll()) >= expected.size && [...mustRepeat].every((id) => got.get(id)!.bodies.length >= 2) && (await stack.db.oneFirst(delivered)) === expected.size, {
    what: 'every event received and recorded delivered, and every delivery caught by a kill received again',
    timeoutMs: 180_000,
    intervalMs: 250,
  });

  // None lost, none invented.
  expect(new Set(got.keys())).toEqual(expected);
  // Duplicates carry the same id (body and header) and the very same bytes.
  let duplicates = 0;
  for (const [id, e] of got) {
    expect(new Set(e.headerIds)).toEqual(new Set([id]));
    expect(new Set(e.bodies).size).toBe(1);
    if (e.bodies.length > 1) duplicates++;
  }
  expect(duplicates).toBeGreaterThanOrEqual(mustRepeat.size);
  // The service's own log agrees: every delivery ended delivered.
  const states = await stack.db.any(sql.type(z.object({ status: z.string(), n: z.number() }))`SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status`);
  expect(states).toEqual([{ status: 'delivered', n: 1000 }]);
});
