import { afterAll, beforeAll, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// One instant rule for every field that takes one (ISO 8601 with Z or an offset, on a real calendar
// date), and an allowed_ips list that never lets every address in by accident.

let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack({ workers: false, env: { TRUST_PROXY: 'loopback', RATE_LIMIT_PER_TOKEN: '1000' } });
  org = await stack.createOrg({ units: 5 });
});
afterAll(async () => stack?.close());

const create = (json: Record<string, unknown>) => stack.api('POST', '/v1/api-clients', { token: org.admin.token, json: { name: 'server', role: 'member', ...json } });
const INSTANT_RULE = 'must be an ISO 8601 date-time with a zone (Z or an offset) on a real calendar date, e.g. 2026-03-01T09:30:00Z';

it('When expires_at is not a real calendar date or has no zone, then 400 naming the field, and nothing is created', async () => {
  const before = (await stack.api('GET', '/v1/api-clients', { token: org.admin.token })).body.data.length;
  const got = [];
  for (const expires_at of ['2027-02-30', '2099-02-30T00:00:00Z', '2099-04-31T12:00:00+01:00', '2099-01-01T00:00:00', '2099-01-01 00:00:00Z', 'tomorrow']) {
    const r = await create({ expires_at });
    got.push([expires_at, r.status, r.body?.detail]);
  }
  expect(got).toEqual(got.map(([v]) => [v, 400, `expires_at: ${INSTANT_RULE}`]));
  expect((await stack.api('GET', '/v1/api-clients', { token: org.admin.token })).body.data.length).toBe(before);
});

it('When expires_at carries an offset, then the client expires at that instant', async () => {
  const r = await create({ expires_at: '2099-03-01T00:00:00+01:00' });
  expect(r.status).toBe(201);
  expect(r.body.expires_at).toBe('2099-02-28T23:00:00.000Z');
});

it('When the other instants the API takes are not real or have no zone, then they are refused by the same rule', async () => {
  const consent = (obtained_at: string) => ({ obtained_at, channel: 'web', notice_version: 'v1' });
  const noZone = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '12345678901', reason: 'corporate', consent: consent('2026-11-20T09:30:00') } });
  expect([noZone.status, noZone.body.detail]).toEqual([400, `consent.obtained_at: ${INSTANT_RULE}`]);
  const csvConsent = await stack.api('POST', '/v1/verify-nin/batches?reason=corporate&consent_obtained_at=2026-02-30T09:30:00Z&consent_channel=web&consent_notice_version=v1', {
    token: org.admin.token,
    raw: 'nin\r\n12345678901\r\n',
    contentType: 'text/csv',
  });
  expect([csvConsent.status, csvConsent.body.detail]).toEqual([400, `obtained_at: ${INSTANT_RULE}`]);
  const history = await stack.api('GET', '/v1/verifications?from=2026-02-30T10:00:00Z', { token: org.member.token });
  expect([history.status, history.body.detail]).toEqual([400, 'from: from is not a valid date and time']);
});

it('When an allowed_ips entry has a zone id, then 400 saying so', async () => {
  const r = await create({ allowed_ips: ['fe80::1%eth0'] });
  expect(r.status).toBe(400);
  expect(r.body.detail).toBe('allowed_ips: "fe80::1%eth0" has a zone id (%...); give the address without it');
});

it('When an allowed_ips entry matches every address, then 400 asking for allow_any, and with allow_any it is taken', async () => {
  const every = ['0.0.0.0/0', '::/0', '::', '1.2.3.4/0', '0.0.0.0', '::ffff:0:0/96', '::/64'];
  const got = [];
  for (const entry of every) {
    const r = await create({ allowed_ips: ['203.0.113.7', entry] });
    got.push([entry, r.status, r.body?.detail]);
  }
  expect(got).toEqual(every.map((e) => [e, 400, `allowed_ips: ${JSON.stringify(e)} matches every address; set "allow_any": true if that is meant`]));
  const confirmed = await create({ allowed_ips: ['0.0.0.0/0', '::/0'], allow_any: true });
  expect(confirmed.status).toBe(201);
  expect(confirmed.body.allowed_ips).toEqual(['0.0.0.0/0', '::/0']);
  const grant = await stack.api('POST', '/v1/login', {
    form: { grant_type: 'client_credentials', client_id: confirmed.body.client_id, client_secret: confirmed.body.client_secret },
    headers: { 'x-forwarded-for': '198.51.100.9' },
  });
  expect(grant.status).toBe(200);
  // A narrow list needs no confirmation; allow_any of another type is a type error.
  expect((await create({ allowed_ips: ['203.0.113.0/24', '2001:db8::/32', 'fe80::1'] })).status).toBe(201);
  expect((await create({ allowed_ips: ['0.0.0.0/0'], allow_any: 'yes' })).status).toBe(422);
});
