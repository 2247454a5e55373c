import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../clients/typescript/src/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { until } from '../setup/wait.ts';

// Test queries read loosely typed rows; the service's own queries are the typed ones.
const q = sql.type(z.record(z.string(), z.any()));

let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack();
  org = await stack.createOrg();
});
afterAll(async () => stack?.close());

async function initialize(token: string, units = 100) {
  const r = await stack.api('POST', '/v1/topup/initialize', { token, form: { units } });
  expect(r.status).toBe(200);
  return r.body as { reference: string; total_amount: number; base_amount: number; vat_amount: number; service_charge: number };
}

async function pay(reference: string) {
  const r = await fetch(`${stack.paymentSim.url}/__sim/transactions/${reference}/pay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(r.status).toBe(200);
}

describe('GET /topups and GET /topups/{reference}', () => {
  it('When a top-up is paid and another is not, then both are listed newest first with amounts as numbers, and the paid one shows what was paid, when it was paid and when it was credited', async () => {
    const paid = await initialize(org.admin.token, 200);
    await pay(paid.reference);
    await until(() => stack.db.oneFirst(q`SELECT status FROM topups WHERE reference = ${paid.reference}`), (s) => s === 'credited');
    const open = await initialize(org.admin.token, 100);

    const r = await stack.api('GET', '/v1/topups', { token: org.admin.token });
    expect(r.status).toBe(200);
    expect(r.body.next_cursor).toBeNull();
    expect(r.body.data).toEqual([
      {
        reference: open.reference, status: 'pending', units: 100, bonus_units: 0, base_amount: open.base_amount, vat_amount: open.vat_amount,
        service_charge: open.service_charge, total_amount: open.total_amount, paid_amount: null, created_at: expect.any(String), credited_at: null,
        invoice_number: null, paid_at: null,
      },
      {
        reference: paid.reference, status: 'credited', units: 200, bonus_units: 0, base_amount: paid.base_amount, vat_amount: paid.vat_amount,
        service_charge: paid.service_charge, total_amount: paid.total_amount, paid_amount: paid.total_amount,
        created_at: expect.stringMatching(/Z$/), credited_at: expect.stringMatching(/Z$/),
        invoice_number: expect.stringMatching(/^INV-\d{4}-\d{6}$/), paid_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      },
    ]);
    // paid_at is the processor's instant kept with the credit, as an ISO instant.
    const kept = await stack.db.oneFirst(q`SELECT paid_at FROM topups WHERE reference = ${paid.reference}`);
    expect(r.body.data[1].paid_at).toBe(new Date(kept).toISOString());
    // The typed client knows the field (a stale client would not compile here).
    const typed = await createClient({ baseUrl: stack.url, token: org.admin.token }).topups();
    const paidAt: string | null = typed.data[1]!.paid_at;
    expect(paidAt).toBe(r.body.data[1].paid_at);
    const one = await stack.api('GET', `/v1/topups/${paid.reference}`, { token: org.admin.token });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(r.body.data[1]);

    const credited = await stack.api('GET', '/v1/topups?status=credited', { token: org.admin.token });
    expect(credited.body.data.map((t: { reference: string }) => t.reference)).toEqual([paid.reference]);
    expect((await stack.api('GET', '/v1/topups?status=paid', { token: org.admin.token })).status).toBe(400);
    expect((await stack.api('GET', '/v1/topups?to=2000-01-01', { token: org.admin.token })).body.data).toEqual([]);
  });

  it("When the reference is another organisation's, then 403 as verify answers; unknown 404; not a reference 400; a member 403", async () => {
    const other = await stack.createOrg();
    const t = await initialize(other.admin.token);
    const foreign = await stack.api('GET', `/v1/topups/${t.reference}`, { token: org.admin.token });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ detail: 'This top-up belongs to another organisation' });
    const unknown = await stack.api('GET', `/v1/topups/TOP-${org.orgId}-0000000000000000`, { token: org.admin.token });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ detail: 'Top-up reference not found' });
    expect((await stack.api('GET', '/v1/topups/REF-NOTATOPUP', { token: org.admin.token })).status).toBe(400);
    expect((await stack.api('GET', `/v1/topups/${t.reference}`, { token: other.member.token })).status).toBe(403);
    expect((await stack.api('GET', '/v1/topups', { token: other.member.token })).status).toBe(403);
    // The other organisation's top-up never shows in this one's list.
    const mine = await stack.api('GET', '/v1/topups?limit=200', { token: org.admin.token });
    expect(mine.body.data.map((x: { reference: string }) => x.reference)).not.toContain(t.reference);
  });

  it('When the pages are walked while top-ups are started, then each one that existed is seen once, in order', async () => {
    const o = await stack.createOrg();
    // Half of them share one created_at: equal timestamps are the hard case for a cursor.
    await stack.db.query(q`
      INSERT INTO topups (reference, org_id, units, unit_cost_kobo, base_amount, vat_amount, service_charge, total_amount, created_at)
      SELECT 'TOP-' || ${o.orgId} || '-' || lpad(to_hex(g), 16, '0'), ${o.orgId}, 100, 10000, 1000000, 75000, 0, 1075000,
             CASE WHEN g % 2 = 0 THEN timestamptz '2026-03-05T10:00:00.5Z' ELSE timestamptz '2026-03-05T10:00:00Z' + g * interval '1 second' END
      FROM generate_series(1, 25) g`);
    const expected = await stack.db.anyFirst(q`SELECT reference FROM topups WHERE org_id = ${o.orgId} ORDER BY created_at DESC, reference DESC`);
    const client = createClient({ baseUrl: stack.url, token: o.admin.token });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.topups({ limit: 6, ...(cursor ? { cursor } : {}) });
      seen.push(...page.data.map((t) => t.reference));
      cursor = page.next_cursor ?? undefined;
      await initialize(o.admin.token);
    } while (cursor);
    expect(seen).toEqual(expected);
    expect((await client.topup(expected[0] as string)).reference).toBe(expected[0]);
  });
});
