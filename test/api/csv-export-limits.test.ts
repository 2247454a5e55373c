import http from 'node:http';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../src/server.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { createHttpServer } from '../../src/lib/http-server.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { createApiDeps } from '../../src/wiring.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

// CSV exports share the API process's export slots: at most CSV_EXPORTS_PER_ORG per organisation,
// CSV_EXPORTS_PER_PROCESS in all, and a reader taking fewer than CSV_EXPORT_MIN_BYTES per
// CSV_EXPORT_MIN_WINDOW_MS is cut. The window is short here so the slow reader is cut within the test.

const q = sql.type(z.record(z.string(), z.any()));

let stack: Stack;
let big: OrgFixture;
let other: OrgFixture;
let third: OrgFixture;
const held: http.ClientRequest[] = [];

beforeAll(async () => {
  stack = await startStack({
    workers: false,
    captureLogs: true,
    env: { CSV_EXPORTS_PER_PROCESS: '3', CSV_EXPORTS_PER_ORG: '2', CSV_EXPORT_MIN_BYTES: '16384', CSV_EXPORT_MIN_WINDOW_MS: '1000' },
  });
  [big, other, third] = await Promise.all([stack.createOrg(), stack.createOrg(), stack.createOrg()]);
  // A ledger far larger than the socket buffers between client and server (some 25 MB of CSV): a
  // reader that stops reading holds the export up.
  for (const orgId of [big.orgId, other.orgId]) {
    await stack.db.query(q`
      INSERT INTO wallet_transactions (org_id, kind, amount, units_delta, units_before, units_after, details)
      SELECT ${orgId}, 'adjustment', 0, 1, g - 1, g, jsonb_build_object('note', repeat('x', 600))
      FROM generate_series(1, 40000) g`);
  }
});
afterAll(async () => {
  for (const r of held) r.destroy();
  await stack?.close();
});

/** Starts an export and stops reading once the status line is in; resolves with the status. */
function stalledExport(token: string, base = stack.url): Promise<{ status: number; retryAfter: string | undefined; body: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}/v1/transactions`, { agent: false, headers: { authorization: `Bearer ${token}`, accept: 'text/csv' } }, (res) => {
      res.pause();
      const body = new Promise<string>((done) => {
        if (res.statusCode === 200) return done('');
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c)).on('end', () => done(text));
        res.resume();
      });
      resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined, body });
    });
    req.on('error', (err) => (held.includes(req) ? undefined : reject(err)));
    held.push(req);
  });
}

/** Another API process of the same deployment: same database, same Redis prefix, its own port. */
async function startSecondApi(): Promise<{ url: string; close(): Promise<void> }> {
  const deps = await createApiDeps(stack.config, createLogger({ level: 'error' }), { clock: systemClock, db: stack.db });
  const server = createHttpServer(createApp(deps));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await deps.close();
    },
  };
}

const endedSlowReaders = () => stack.logs.filter((l) => l.includes('CSV export ended: the reader took too little')).length;

describe('CSV export limits', () => {
  it('When an organisation has 2 exports running, then its third is 429 with Retry-After while others still export; past the process cap everyone waits; readers that stop reading are cut and their slots freed; the organisation cap holds across API processes', { timeout: 60_000 }, async () => {
    const [a1, a2] = [await stalledExport(big.admin.token), await stalledExport(big.admin.token)];
    expect([a1.status, a2.status]).toEqual([200, 200]);
    const a3 = await stalledExport(big.admin.token);
    expect(a3.status).toBe(429);
    expect(a3.retryAfter).toBe('5');
    expect(JSON.parse(await a3.body)).toEqual({ detail: 'Too many CSV exports in progress for this organisation; retry shortly' });
    // Another organisation is not held up by the first one's exports...
    const b1 = await stalledExport(other.admin.token);
    expect(b1.status).toBe(200);
    // ...until the process has no slot left.
    const c1 = await stalledExport(third.admin.token);
    expect(c1.status).toBe(429);
    expect(JSON.parse(await c1.body)).toEqual({ detail: 'Too many CSV exports in progress; retry shortly' });

    // The three exports above have readers that stopped: each is cut within a window or two, freeing its slot.
    await waitFor(() => endedSlowReaders() >= 3, { what: 'the three stalled exports ended', timeoutMs: 20_000 });
    const r = await stack.api('GET', '/v1/transactions', { token: big.admin.token, headers: { accept: 'text/csv' } });
    expect(r.status).toBe(200);
    // A reader that keeps up is not cut: every line arrives (40,000 and the header).
    expect(r.text.split('\r\n').filter(Boolean)).toHaveLength(40_001);

    // The per-organisation cap holds across API processes (they share Redis): one export on each of
    // two processes, and a third on either is refused.
    const second = await startSecondApi();
    try {
      const [here, there] = [await stalledExport(other.admin.token), await stalledExport(other.admin.token, second.url)];
      expect([here.status, there.status]).toEqual([200, 200]);
      const third = await stalledExport(other.admin.token, second.url);
      expect(third.status).toBe(429);
      expect(JSON.parse(await third.body)).toEqual({ detail: 'Too many CSV exports in progress for this organisation; retry shortly' });
    } finally {
      for (const r of held) r.destroy();
      await second.close();
    }
  });
});
