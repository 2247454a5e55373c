import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../clients/typescript/src/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

// Test queries read loosely typed rows; the service's own queries are the typed ones.
const q = sql.type(z.record(z.string(), z.any()));

const COLUMNS = 'id,kind,amount,vat_amount,service_charge,units_delta,units_before,units_after,reference,details,created_at,username,api_client_id,api_client_name,description';

let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack();
  org = await stack.createOrg({ units: 10 });
});
afterAll(async () => stack?.close());

/** Appends `n` adjustment lines of +1 unit each (the wallet row is left alone: only the ledger is read here). */
async function seed(orgId: number, n: number, at: string | null = null, note = 'seed'): Promise<void> {
  await stack.db.query(q`
    INSERT INTO wallet_transactions (org_id, kind, amount, units_delta, units_before, units_after, details, created_at)
    SELECT ${orgId}, 'adjustment', 0, 1, 1000 + g - 1, 1000 + g, jsonb_build_object('note', ${note} || ' ' || g),
           COALESCE(${at}::timestamptz, now())
    FROM generate_series(1, ${n}) g`);
}

const list = (token: string, query = '') => stack.api('GET', `/v1/transactions${query}`, { token });
const csv = (token: string, query = '') => stack.api('GET', `/v1/transactions${query}`, { token, headers: { accept: 'text/csv' } });

/** RFC 4180 reader, enough for the checks below. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(field), (field = '');
    else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      (row = []), (field = ''), i++;
    } else field += c;
  }
  expect(field, 'the CSV ends with CRLF').toBe('');
  return rows;
}

describe('GET /transactions', () => {
  it('When an administrator lists the ledger, then lines come newest first with every field as numbers, and a fixture call shows as a free line', async () => {
    const o = await stack.createOrg({ units: 5 });
    const fixture = await stack.api('POST', '/v1/verify-nin', { token: o.admin.token, json: { nin: '12345678901', reason: 'corporate' } });
    expect(fixture.status).toBe(200);
    const r = await list(o.admin.token);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(r.body.next_cursor).toBeNull();
    expect(r.body.data).toHaveLength(2);
    const [call, funding] = r.body.data;
    expect(call).toEqual({
      id: expect.any(Number),
      kind: 'fixture_verification',
      description: 'Test-mode NIN verification (free)',
      amount: 0,
      vat_amount: null,
      service_charge: null,
      units_delta: 0,
      units_before: 5,
      units_after: 5,
      reference: fixture.body.data.reference_id,
      details: expect.objectContaining({ fixture: true }),
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      username: o.admin.username,
      api_client: null,
    });
    expect(funding).toMatchObject({ kind: 'adjustment', units_delta: 5, units_before: 0, units_after: 5, reference: null, details: { note: 'test funding' } });
    expect(call.id).toBeGreaterThan(funding.id);
  });

  it('When a team member asks, then 403; without a token, 401', async () => {
    const r = await list(org.member.token);
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ detail: 'Only organisation administrators and finance officers may do this' });
    expect((await csv(org.member.token)).status).toBe(403);
    expect((await stack.api('GET', '/v1/transactions')).status).toBe(401);
  });

  it('When limit is absent, 200, 201, 0 or not a number, then 50 lines, 200 lines, 400, 400 and 422', async () => {
    const o = await stack.createOrg();
    await seed(o.orgId, 230);
    expect((await list(o.admin.token)).body.data).toHaveLength(50);
    expect((await list(o.admin.token, '?limit=200')).body.data).toHaveLength(200);
    const over = await list(o.admin.token, '?limit=201');
    expect(over.status).toBe(400);
    expect(over.body).toEqual({ detail: 'limit: limit must be an integer between 1 and 200' });
    expect((await list(o.admin.token, '?limit=0')).status).toBe(400);
    expect((await list(o.admin.token, '?limit=abc')).status).toBe(422);
  });

  it('When the pages are walked while new lines are appended, then every line that existed is seen exactly once, in order, and the walk ends', async () => {
    const o = await stack.createOrg();
    await seed(o.orgId, 47);
    const existing = (await stack.db.anyFirst(q`SELECT id::int FROM wallet_transactions WHERE org_id = ${o.orgId} ORDER BY id DESC`)) as number[];
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await list(o.admin.token, `?limit=10${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      seen.push(...r.body.data.map((l: { id: number }) => l.id));
      cursor = r.body.next_cursor;
      pages++;
      // Someone is busy meanwhile: new lines land before the cursor, not in the rest of the walk.
      await seed(o.orgId, 3, null, 'concurrent');
    } while (cursor);
    expect(pages).toBe(5);
    expect(seen).toEqual(existing);
  });

  it('When a cursor is malformed or comes from another list, then 400', async () => {
    for (const bad of ['not-a-cursor!', 'WzEsMl0', Buffer.from('["topups","x","y"]').toString('base64url'), Buffer.from('["transactions",-4]').toString('base64url')]) {
      const r = await list(org.admin.token, `?cursor=${encodeURIComponent(bad)}`);
      expect(r.status, bad).toBe(400);
      expect(r.body).toEqual({ detail: 'invalid cursor' });
    }
  });

  it('When kind, from and to are given, then only those lines, the days taken inclusively in Lagos time', async () => {
    const o = await stack.createOrg();
    // 22:59:59 UTC is 23:59:59 in Lagos (still 1 March); 23:00 UTC is already 2 March there.
    await seed(o.orgId, 1, '2026-03-01T22:59:59Z', 'late on the 1st');
    await seed(o.orgId, 1, '2026-03-01T23:00:00Z', 'first moment of the 2nd');
    await seed(o.orgId, 1, '2026-03-03T22:59:59.999Z', 'last moment of the 3rd');
    await seed(o.orgId, 1, '2026-03-03T23:00:00Z', 'first moment of the 4th');
    const notes = async (query: string) => {
      const r = await list(o.admin.token, query);
      expect(r.status, query).toBe(200);
      return r.body.data.map((l: { details: { note: string } }) => l.details.note);
    };
    expect(await notes('?from=2026-03-02&to=2026-03-03')).toEqual(['last moment of the 3rd 1', 'first moment of the 2nd 1']);
    expect(await notes('?to=2026-03-01&kind=adjustment')).toEqual(['late on the 1st 1']);
    expect(await notes('?from=2026-03-04')).toEqual(['first moment of the 4th 1']);
    expect(await notes('?kind=topup')).toEqual([]);
    expect((await list(o.admin.token, '?kind=refund')).status).toBe(400);
    expect((await list(o.admin.token, '?from=2026-02-30')).body).toEqual({ detail: 'from: from is not a valid calendar date' });
    expect((await list(o.admin.token, '?from=1-3-2026')).status).toBe(400);
    expect((await list(o.admin.token, '?from=2026-03-05&to=2026-03-04')).body).toEqual({ detail: 'from must not be after to' });
    // An instant with a zone is exact and inclusive; `+01:00` left unencoded (a space once decoded) too.
    expect(await notes('?from=2026-03-01T23:00:00Z&to=2026-03-03T23:59:59.999+01:00')).toEqual(['last moment of the 3rd 1', 'first moment of the 2nd 1']);
    expect(await notes('?from=2026-03-02T00:00:00+01:00&to=2026-03-04')).toEqual(['first moment of the 4th 1', 'last moment of the 3rd 1', 'first moment of the 2nd 1']);
    expect(await notes('?to=2026-03-01T23:59:59+01:00&kind=adjustment')).toEqual(['late on the 1st 1']);
    expect((await list(o.admin.token, '?to=2026-03-01T25:00:00Z')).body).toEqual({ detail: 'to: to is not a valid date and time' });
  });

  it('When CSV is asked for, then the whole filtered range comes as CSV with a header row, streamed, limit and cursor not applying', async () => {
    const o = await stack.createOrg({ units: 3 });
    await seed(o.orgId, 1200);
    await seed(o.orgId, 1, null, 'a, "quoted"\r\nnote');
    const r = await csv(o.admin.token, '?limit=5&kind=adjustment');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.headers.get('content-disposition')).toBe(`attachment; filename="transactions-${o.orgId}.csv"`);
    // Sent as it is read: no length known up front.
    expect(r.headers.get('content-length')).toBeNull();
    expect(r.headers.get('transfer-encoding')).toBe('chunked');
    const rows = parseCsv(r.text);
    expect(rows[0]!.join(',')).toBe(COLUMNS);
    expect(rows).toHaveLength(1 + 1202);

    const json = await list(o.admin.token, '?limit=2');
    const [newest, next] = json.body.data;
    expect(rows[1]!.slice(0, 9)).toEqual([String(newest.id), 'adjustment', '0', '', '', '1', '1000', '1001', '']);
    expect(JSON.parse(rows[1]![9]!)).toEqual({ note: 'a, "quoted"\r\nnote 1' });
    expect(rows[1]![10]).toBe(newest.created_at);
    expect(rows[2]![0]).toBe(String(next.id));
    const ids = rows.slice(1).map((row) => Number(row[0]));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(new Set(ids).size).toBe(ids.length);
    expect(JSON.parse(rows.at(-1)![9]!)).toEqual({ note: 'test funding' });
    for (const row of rows.slice(1)) expect(row).toHaveLength(15);
    expect(rows[1]!.at(-1)).toBe('Adjustment: a, "quoted"\r\nnote 1');
  });

  it('When CSV is asked for with a filter that matches nothing, then the header row alone; a bad filter is a JSON 400', async () => {
    const r = await csv(org.admin.token, '?kind=topup');
    expect(r.status).toBe(200);
    expect(r.text).toBe(`${COLUMNS}\r\n`);
    const bad = await csv(org.admin.token, '?from=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(bad.body).toEqual({ detail: 'from: from must be a date YYYY-MM-DD or a date-time with a zone, e.g. 2026-03-01T09:30:00Z' });
  });

  it('When a client abandons a CSV export half-way, then its database connection is given back and the next export runs', async () => {
    const o = await stack.createOrg();
    await seed(o.orgId, 20_000);
    for (let i = 0; i < 6; i++) {
      const ac = new AbortController();
      const res = await fetch(`${stack.url}/v1/transactions`, { headers: { authorization: `Bearer ${o.admin.token}`, accept: 'text/csv' }, signal: ac.signal });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      await reader.read();
      ac.abort();
      await reader.cancel().catch(() => undefined);
    }
    // More abandoned exports than the cap on exports in flight, and still every one is let go: no
    // export query is left running, and a new export is admitted.
    const exporting = () =>
      stack.db.oneFirst(q`
        SELECT count(*)::int FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active' AND query LIKE '%FROM wallet_transactions WHERE org_id%'`);
    await waitFor(async () => (await exporting()) === 0, { what: 'the abandoned exports to stop reading' });
    const r = await csv(o.admin.token, '?from=2000-01-01');
    expect(r.status).toBe(200);
    expect(parseCsv(r.text)).toHaveLength(1 + 20_000);
  });

  it('When the typed client reads the ledger, then its page and CSV methods work', async () => {
    const client = createClient({ baseUrl: stack.url, token: org.admin.token });
    const page = await client.transactions({ limit: 1 });
    expect(page.data).toHaveLength(1);
    expect(page.next_cursor).toBeNull();
    const stream = await client.transactionsCsv({ kind: 'adjustment' });
    const text = await new Response(stream).text();
    expect(text.split('\r\n')[0]).toBe(COLUMNS);
    expect(parseCsv(text)).toHaveLength(2);
    const member = createClient({ baseUrl: stack.url, token: org.member.token });
    await expect(member.transactionsCsv()).rejects.toMatchObject({ status: 403, detail: 'Only organisation administrators and finance officers may do this' });
  });
});
