import { randomBytes } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// Each ledger line says what it is and why it costs what it does; a face match is two lines (the
// lookup's and the comparison's), and both say the whole cost. The lines are written as the wallet
// writes them; JSON and CSV must say the same words.

let stack: Stack;
let org: OrgFixture;
const ref = () => `REF-${randomBytes(6).toString('hex').toUpperCase()}`;
const compared = ref();
const notCompared = ref();
const plain = ref();
const fixture = ref();
let topup: string;

beforeAll(async () => {
  stack = await startStack({ workers: false });
  org = await stack.createOrg({ units: 0 });
  topup = `TOP-${org.orgId}-${randomBytes(8).toString('hex')}`;
  await stack.db.query(sql.unsafe`
    INSERT INTO wallet_transactions (org_id, kind, amount, units_delta, units_before, units_after, details, reference, vat_amount, service_charge) VALUES
      (${org.orgId}, 'topup', 1000000, 150, 0, 150, '{"units": 100, "bonus_units": 50}', ${topup}, 75000, 26523),
      (${org.orgId}, 'verification', 10000, -1, 150, 149, '{"mode": "vnin", "reason": "corporate"}', ${plain}, NULL, NULL),
      (${org.orgId}, 'fixture_verification', 0, 0, 149, 149, '{"mode": "nin", "fixture": true}', ${fixture}, NULL, NULL),
      (${org.orgId}, 'verification', 10000, -1, 149, 148, '{"mode": "face", "reason": "corporate"}', ${compared}, NULL, NULL),
      (${org.orgId}, 'face_match', 20000, -2, 148, 146, '{"mode": "face", "reason": "corporate", "face": true}', ${compared}, NULL, NULL),
      (${org.orgId}, 'verification', 10000, -1, 146, 145, '{"mode": "face", "reason": "corporate"}', ${notCompared}, NULL, NULL),
      (${org.orgId}, 'adjustment', 0, 5, 145, 150, '{"note": "goodwill, for the outage"}', NULL, NULL, NULL),
      (${org.orgId}, 'adjustment', 0, -1, 150, 149, '{}', NULL, NULL, NULL)`);
});
afterAll(async () => stack?.close());

// Oldest first: the order they were written in.
const EXPECTED = [
  ['topup', 'Top-up of 100 units + 50 bonus'],
  ['verification', 'Virtual NIN verification (1 unit)'],
  ['fixture_verification', 'Test-mode NIN verification (free)'],
  ['verification', "NIN verification with face match (3 units: lookup 1 + face 2): the lookup's 1"],
  ['face_match', "NIN verification with face match (3 units: lookup 1 + face 2): the face comparison's 2"],
  ['verification', 'NIN verification with face match, faces not compared (1 unit: lookup only)'],
  ['adjustment', 'Adjustment: goodwill, for the outage'],
  ['adjustment', 'Adjustment'],
];

describe('ledger line descriptions', () => {
  it('When a face match was charged, then both its lines say it costs the lookup and the face comparison, and every other line says what it is', async () => {
    const r = await stack.api('GET', '/v1/transactions?limit=100', { token: org.admin.token });
    expect(r.status).toBe(200);
    const lines = [...(r.body.data as { kind: string; description: string }[])].reverse();
    expect(lines.map((l) => [l.kind, l.description])).toEqual(EXPECTED);
  });

  it('When the ledger is exported as CSV, then its last column is the same description', async () => {
    const r = await fetch(`${stack.url}/v1/transactions`, { headers: { authorization: `Bearer ${org.admin.token}`, accept: 'text/csv' } });
    expect(r.status).toBe(200);
    const rows = parse(await r.text(), { columns: true }) as Record<string, string>[];
    expect(Object.keys(rows[0]!).at(-1)).toBe('description');
    expect(rows.reverse().map((row) => [row.kind, row.description])).toEqual(EXPECTED);
  });
});
