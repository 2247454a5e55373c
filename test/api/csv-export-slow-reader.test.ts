import http from 'node:http';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

// The slow-reader rule is a sliding window over what the reader took: a reader that reads nothing is
// cut within CSV_EXPORT_MIN_WINDOW_MS (and a little) of the socket buffers filling up, not after a
// second window once those buffers have swallowed the first one's bytes. The window is 20 s: a fixed
// window cuts at about 40 s, past the generous bound below (window + 12 s, which also covers the time
// the buffers take to fill on a loaded machine); the lower bound (not before a window since the
// request) is safe by construction whatever the load.

const WINDOW_MS = 20_000;
const q = sql.type(z.record(z.string(), z.any()));

let stack: Stack;
let org: OrgFixture;
const held: http.ClientRequest[] = [];

beforeAll(async () => {
  stack = await startStack({
    workers: false,
    captureLogs: true,
    env: { CSV_EXPORTS_PER_PROCESS: '4', CSV_EXPORTS_PER_ORG: '1', CSV_EXPORT_MIN_BYTES: '16384', CSV_EXPORT_MIN_WINDOW_MS: String(WINDOW_MS) },
  });
  org = await stack.createOrg();
  // Some 25 MB of CSV, far more than the socket buffers between client and server hold.
  await stack.db.query(q`
    INSERT INTO wallet_transactions (org_id, kind, amount, units_delta, units_before, units_after, details)
    SELECT ${org.orgId}, 'adjustment', 0, 1, g - 1, g, jsonb_build_object('note', repeat('x', 600))
    FROM generate_series(1, 40000) g`);
});
afterAll(async () => {
  for (const r of held) r.destroy();
  await stack?.close();
});

/** Starts an export and reads nothing of its body; resolves with the status once the headers are in. */
function stalledExport(token: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${stack.url}/v1/transactions`, { agent: false, headers: { authorization: `Bearer ${token}`, accept: 'text/csv' } }, (res) => {
      res.pause();
      resolve(res.statusCode);
    });
    req.on('error', (err) => (held.includes(req) ? undefined : reject(err)));
    held.push(req);
  });
}

type Line = { msg?: string; time?: string };
const cuts = () => stack.logs.map((l) => JSON.parse(l) as Line).filter((l) => l.msg === 'CSV export ended: the reader took too little');

it('When a CSV export reader reads nothing, then it is cut after one window (not before it, and well before a second), and its slot is free again', { timeout: 120_000 }, async () => {
  const askedAt = Date.now();
  expect(await stalledExport(org.admin.token)).toBe(200);
  const answeredAt = Date.now();
  // The organisation's one slot is held while the export waits on its reader.
  expect((await stack.api('GET', '/v1/transactions', { token: org.admin.token, headers: { accept: 'text/csv' } })).status).toBe(429);

  const [cut] = await waitFor(() => (cuts().length > 0 ? cuts() : null), { what: 'the stalled export cut', timeoutMs: 90_000 });
  const cutAt = Date.parse(cut!.time!);
  expect(cutAt - askedAt, 'ms from the request to the cut').toBeGreaterThanOrEqual(WINDOW_MS);
  expect(cutAt - answeredAt, 'ms from the answer to the cut').toBeLessThan(WINDOW_MS + 12_000);
  // The cut freed the slot: the next export runs, and a reader that keeps up gets every line.
  const r = await stack.api('GET', '/v1/transactions', { token: org.admin.token, headers: { accept: 'text/csv' } });
  expect(r.status).toBe(200);
  expect(r.text.split('\r\n').filter(Boolean)).toHaveLength(40_001);
});
