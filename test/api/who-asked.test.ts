import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// Who made a verification (or a top-up's ledger line): a person or one of the organisation's API
// clients. Both appear in the lists, each with the one field that names them.

let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack();
  org = await stack.createOrg({ units: 5 });
});
afterAll(async () => stack?.close());

async function apiClientToken(name: string): Promise<{ client_id: string; token: string }> {
  const made = await stack.api('POST', '/v1/api-clients', { token: org.admin.token, json: { name, role: 'member' } });
  expect(made.status).toBe(201);
  const login = await stack.api('POST', '/v1/login', {
    form: { grant_type: 'client_credentials', client_id: made.body.client_id, client_secret: made.body.client_secret },
  });
  expect(login.status).toBe(200);
  return { client_id: made.body.client_id, token: login.body.access_token };
}

/** The CSV's rows split on commas: enough for the fields before `details` and the three after it. */
const csvRows = (text: string) =>
  text
    .split('\r\n')
    .filter(Boolean)
    .map((l) => l.split(','));

describe('Who asked', () => {
  it('When an API client and a person verify, then GET /verifications lists both, the client with api_client {client_id, name} and username null', async () => {
    const client = await apiClientToken('=KYC backend');
    const byClient = await stack.api('POST', '/v1/verify-nin', { token: client.token, json: { nin: '23456789012', reason: 'corporate' } });
    expect(byClient.status).toBe(200);
    const byPerson = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '23456789013', reason: 'corporate' } });
    expect(byPerson.status).toBe(200);

    const r = await stack.api('GET', '/v1/verifications', { token: org.member.token });
    expect(r.status).toBe(200);
    const who = r.body.data.map((v: { reference_id: string; username: unknown; api_client: unknown }) => [v.reference_id, v.username, v.api_client]);
    expect(who).toEqual([
      [byPerson.body.data.reference_id, org.member.username, null],
      [byClient.body.data.reference_id, null, { client_id: client.client_id, name: '=KYC backend' }],
    ]);

    // The ledger names the same actors, in JSON and in the CSV export.
    const ledger = await stack.api('GET', '/v1/transactions?kind=verification', { token: org.admin.token });
    expect(ledger.status).toBe(200);
    expect(ledger.body.data.map((l: { reference: string; username: unknown; api_client: unknown }) => [l.reference, l.username, l.api_client])).toEqual([
      [byPerson.body.data.reference_id, org.member.username, null],
      [byClient.body.data.reference_id, null, { client_id: client.client_id, name: '=KYC backend' }],
    ]);
    const csv = await stack.api('GET', '/v1/transactions?kind=verification', { token: org.admin.token, headers: { accept: 'text/csv' } });
    expect(csv.status).toBe(200);
    const [header, ...rows] = csvRows(csv.text);
    // The description comes last, after who asked.
    expect(header!.slice(-4)).toEqual(['username', 'api_client_id', 'api_client_name', 'description']);
    expect(header![8]).toBe('reference');
    expect(rows.map((row) => [row[8], ...row.slice(-4, -1)])).toEqual([
      [byPerson.body.data.reference_id, org.member.username, '', ''],
      // A name that would start a spreadsheet formula is defused with an apostrophe.
      [byClient.body.data.reference_id, '', client.client_id, "'=KYC backend"],
    ]);
  });
});
