import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openJson } from '../../src/lib/crypto.ts';
import { personForNin } from '../../src/simulators/identity-authority/persons.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

// Recorded consent (optional on every verification POST, mandatory when the organisation says so)
// and match-only verifications (booleans and scores, never the record), over HTTP against the
// identity simulator.

let stack: Stack;
const DAY = 86_400_000;
const consentAt = (msAgo: number) => ({ obtained_at: new Date(Date.now() - msAgo).toISOString(), channel: 'mobile', notice_version: 'privacy-2026-03' });

const walletRow = z.object({ units: z.coerce.number(), reserved: z.coerce.number() });
const wallet = (orgId: number) => stack.db.one(sql.type(walletRow)`SELECT units, reserved FROM wallets WHERE org_id = ${orgId}`);
const rowsOf = (orgId: number) => stack.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM verifications WHERE org_id = ${orgId}`);
const stored = (ref: string) =>
  stack.db.one(sql.type(z.object({ record_enc: z.instanceof(Buffer).nullable(), key_id: z.string(), consent: z.unknown() }))`
    SELECT record_enc, key_id, consent FROM verifications WHERE reference_id = ${ref}`);

/** A NIN whose simulated person has this last name (the simulator's people are deterministic). */
function ninWithSurname(surname: string): { nin: string; person: ReturnType<typeof personForNin> } {
  for (let i = 0; i < 100_000; i++) {
    const nin = String(31_000_000_000 + i * 7919);
    const person = personForNin(nin);
    if (person.lastName === surname && person.middleName !== '') return { nin, person };
  }
  throw new Error(`no simulated person named ${surname}`);
}

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack?.close());

describe('consent', () => {
  it('When a verification carries consent, then it is stored and shown in the history and the requery; without it, null', async () => {
    const org = await stack.createOrg({ units: 5 });
    const consent = consentAt(3 * DAY);
    const live = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '23456789012', reason: 'corporate', consent } });
    expect(live.status).toBe(200);
    const plain = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '12345678901', reason: 'corporate' } });
    expect(plain.status).toBe(200);
    const ref = live.body.data.reference_id as string;

    const list = await stack.api('GET', '/v1/verifications', { token: org.member.token });
    expect(list.status).toBe(200);
    const byRef = new Map(list.body.data.map((r: { reference_id: string }) => [r.reference_id, r]));
    expect((byRef.get(ref) as { consent: unknown }).consent).toEqual(consent);
    expect((byRef.get(plain.body.data.reference_id) as { consent: unknown }).consent).toBeNull();

    const requery = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } });
    expect(requery.status).toBe(200);
    expect(requery.body.consent).toEqual(consent);
    expect((await stored(ref)).consent).toEqual(consent);
  });

  it.each([
    ['obtained_at in the future', { ...consentAt(0), obtained_at: new Date(Date.now() + DAY).toISOString() }, 'consent.obtained_at: must not be in the future'],
    ['obtained_at 91 days old', consentAt(91 * DAY), 'consent.obtained_at: must be at most 90 days old'],
    ['obtained_at not a date-time', { ...consentAt(0), obtained_at: '2026-02-30' }, 'consent.obtained_at'],
    ['an unknown channel', { ...consentAt(0), channel: 'telepathy' }, 'consent.channel'],
    ['an empty notice_version', { ...consentAt(0), notice_version: '' }, 'consent.notice_version'],
    ['a notice_version of 65 characters', { ...consentAt(0), notice_version: 'v'.repeat(65) }, 'consent.notice_version'],
  ])('When consent has %s, then the verification is 400 naming the field and nothing is written', async (_what, consent, detail) => {
    const org = await stack.createOrg({ units: 5 });
    const r = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '23456789012', reason: 'corporate', consent } });
    expect(r.status).toBe(400);
    expect(r.body.detail).toContain(detail);
    expect(await rowsOf(org.orgId)).toBe(0);
  });

  it('When an administrator requires consent, then a live lookup without it is 400 before anything is held or asked, a fixture still answers, and one with consent is charged', async () => {
    const org = await stack.createOrg({ units: 5 });
    expect((await stack.api('GET', '/v1/me/organisation', { token: org.member.token })).body).toEqual({ require_consent: false, require_mfa: false, low_balance_units: null, address: null, tin: null, face_match_threshold: 75, alert_emails: [], support_contact: null, require_liveness: false });
    const byMember = await stack.api('PATCH', '/v1/me/organisation', { token: org.member.token, json: { require_consent: true } });
    expect(byMember.status).toBe(403);
    const set = await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: { require_consent: true } });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ require_consent: true, require_mfa: false, low_balance_units: null, address: null, tin: null, face_match_threshold: 75, alert_emails: [], support_contact: null, require_liveness: false });

    // The reasons list is fetched once per cache period: fetched now, it is not counted as a lookup below.
    expect((await stack.api('GET', '/v1/nimc-reasons', { token: org.member.token })).status).toBe(200);
    const callsBefore = stack.identitySim.stats().calls;
    for (const [path, json] of [
      ['/v1/verify-nin', { nin: '23456789012', reason: 'corporate' }],
      ['/v1/verify-nin/phone', { phone_no: '08031234567', reason: 'corporate' }],
      ['/v1/verify-nin/demography', { first_name: 'Ada', last_name: 'Obi', date_of_birth: '01-02-1990', gender: 'f' }],
      ['/v1/verify-nin/match', { nin: '23456789012', reason: 'corporate', fname: 'Ada', lname: 'Obi' }],
    ] as const) {
      const refused = await stack.api('POST', path, { token: org.member.token, json });
      expect(refused.status, path).toBe(400);
      expect(refused.body).toEqual({ detail: 'consent is required by your organisation' });
    }
    expect(stack.identitySim.stats().calls).toBe(callsBefore);
    expect(await wallet(org.orgId)).toEqual({ units: 5, reserved: 0 });
    expect(await rowsOf(org.orgId)).toBe(0);

    expect((await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '12345678901', reason: 'corporate' } })).status).toBe(200);
    const ok = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '23456789012', reason: 'corporate', consent: consentAt(DAY) } });
    expect(ok.status).toBe(200);
    expect(await wallet(org.orgId)).toEqual({ units: 4, reserved: 0 });

    const off = await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: { require_consent: false } });
    expect(off.body).toEqual({ require_consent: false, require_mfa: false, low_balance_units: null, address: null, tin: null, face_match_threshold: 75, alert_emails: [], support_contact: null, require_liveness: false });
    expect((await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '23456789012', reason: 'corporate' } })).status).toBe(200);
  });

  it('When the settings patch is empty, unknown or mistyped, then it is refused', async () => {
    const org = await stack.createOrg({ units: 0 });
    expect((await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: {} })).status).toBe(400);
    expect((await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: { require_everything: true } })).status).toBe(400);
    expect((await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: { require_consent: 'yes' } })).status).toBe(422);
  });
});

describe('match-only verification', () => {
  let org: OrgFixture;
  beforeAll(async () => {
    org = await stack.createOrg({ units: 10 });
  });
  const match = (json: Record<string, unknown>) => stack.api('POST', '/v1/verify-nin/match', { token: org.member.token, json: { reason: 'corporate', ...json } });

  it('When a fixture NIN is matched with accents, case and spacing, then every field sent matches, nothing is charged, and no slip is printed', async () => {
    const before = await wallet(org.orgId);
    const r = await match({ nin: '12345678901', fname: 'ÁDÁÈZÉ', lname: 'ọ̀kọ́n-kwọ̀', dob: '14-03-1991', gender: 'F', phone: '+2348031234567' });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({
      reference_id: expect.stringMatching(/^REF-[A-Z0-9]{12}$/),
      match: { fname: true, lname: true, dob: true, gender: true, phone: true },
      scores: { fname: 100, lname: 100 },
      all_match: true,
    });
    expect(await wallet(org.orgId)).toEqual(before);
    const slip = await stack.api('GET', `/v1/verify-nin/slip/${r.body.data.reference_id}`, { token: org.member.token });
    expect(slip.status).toBe(404);
    expect(slip.body).toEqual({ detail: 'Record not found' });
  });

  it('When fields are wrong or not sent, then the wrong ones are false, the unsent ones absent, and all_match false', async () => {
    const r = await match({ nin: '12345678901', fname: 'Adaeze', lname: 'Okafor', dob: '15-03-1991' });
    expect(r.status).toBe(200);
    expect(r.body.data.match).toEqual({ fname: true, lname: false, dob: false });
    expect(r.body.data.scores.lname).toBeLessThan(90);
    expect(r.body.data.all_match).toBe(false);
  });

  it('When a live person is matched, then 1 unit is charged, the requery answers the same data, and only booleans and scores are stored', async () => {
    const { nin, person } = ninWithSurname('Okafor');
    const before = await wallet(org.orgId);
    const typedFirst = `${person.firstName.toUpperCase()}  ${person.middleName}`;
    const r = await match({ nin, fname: typedFirst, lname: 'Ọ̀káfọ̀r', gender: person.gender });
    expect(r.status).toBe(200);
    expect(r.body.data.match).toEqual({ fname: true, lname: true, gender: true });
    expect(r.body.data.all_match).toBe(true);
    expect(await wallet(org.orgId)).toEqual({ units: before.units - 1, reserved: 0 });

    const ref = r.body.data.reference_id as string;
    const again = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(r.body.data);

    const row = await stored(ref);
    const kept = openJson<Record<string, unknown>>(stack.config.encryptionKeys, { keyId: row.key_id, data: row.record_enc! }, ref);
    expect(Object.keys(kept).sort()).toEqual(['all_match', 'match', 'scores']);
    const text = JSON.stringify(kept);
    for (const value of [person.firstName, person.lastName, person.phone, person.address]) expect(text).not.toContain(value);
  });

  it('When the NIN is not found, then 404 NIN not found and nothing is charged', async () => {
    const before = await wallet(org.orgId);
    const r = await match({ nin: '01234567890', fname: 'Ada', lname: 'Obi' });
    expect(r.status).toBe(404);
    expect(r.body.detail).toBe('NIN not found');
    expect(await wallet(org.orgId)).toEqual(before);
  });

  it('When both or neither identifier is sent, or a field breaks its rule, then 400', async () => {
    expect((await match({ fname: 'Ada', lname: 'Obi' })).status).toBe(400);
    expect((await match({ nin: '12345678901', vnin: 'AA000000000001ZZ', fname: 'Ada', lname: 'Obi' })).status).toBe(400);
    expect((await match({ nin: '12345678901', fname: 'Ada', lname: 'Obi', dob: '1991-03-14' })).status).toBe(400);
    expect((await match({ nin: '12345678901', fname: 'Ada', lname: 'Obi', gender: 'x' })).status).toBe(400);
    expect((await match({ nin: '12345678901', fname: '', lname: 'Obi' })).status).toBe(400);
    expect((await match({ nin: '12345678901', lname: 'Obi' })).status).toBe(422);
  });
});

describe('match-only verification by vNIN', () => {
  it('When a match is asked by a fixture vNIN or by a live token, then it compares like a NIN match, the token is used once, and a second use is refused', async () => {
    const org = await stack.createOrg({ units: 5 });
    const match = (json: Record<string, unknown>) => stack.api('POST', '/v1/verify-nin/match', { token: org.member.token, json: { reason: 'corporate', ...json } });
    const fixture = await match({ vnin: 'aa000000000001zz', fname: 'Adaeze', lname: 'Okonkwo' });
    expect(fixture.status).toBe(200);
    expect(fixture.body.data.match).toEqual({ fname: true, lname: true });

    const { nin, person } = ninWithSurname('Okafor');
    const issued = await fetch(`${stack.identitySim.url}/sandbox/vnin`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ nin, enterprise_code: stack.config.nimcEnterpriseCode }) });
    expect(issued.status).toBe(201);
    const { vnin } = (await issued.json()) as { vnin: string };
    const live = await match({ vnin, fname: person.firstName, lname: person.lastName });
    expect(live.status).toBe(200);
    expect(live.body.data.all_match).toBe(true);
    expect(await wallet(org.orgId)).toEqual({ units: 4, reserved: 0 });

    const again = await match({ vnin, fname: person.firstName, lname: person.lastName });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('vnin_used');
    expect(await wallet(org.orgId)).toEqual({ units: 4, reserved: 0 });
  });
});

describe('review findings', () => {
  it('When consent names a day the calendar does not have, then 400 naming obtained_at (not rolled over to the next month)', async () => {
    const org = await stack.createOrg({ units: 1 });
    const r = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '12345678901', reason: 'corporate', consent: { obtained_at: '2026-09-31T10:00:00Z', channel: 'web', notice_version: 'v1' } } });
    expect(r.status).toBe(400);
    expect(r.body.detail).toContain('consent.obtained_at');
  });

  it('When a vNIN carries a control character, then 400 with the vNIN sentence', async () => {
    const org = await stack.createOrg({ units: 1 });
    const r = await stack.api('POST', '/v1/verify-nin/vnin', { token: org.member.token, json: { vnin: 'AB012345678910Y\n', reason: 'corporate' } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ detail: 'vnin must be 16 letters and digits' });
  });

  it('When a match by vNIN fails after the call went out, then a retry with the same Idempotency-Key replays the 502 and never spends the token again', async () => {
    const org = await stack.createOrg({ units: 3 });
    // NINs of the form 5001... make the simulator answer 503 (README of the simulator: fault NINs).
    const issued = await fetch(`${stack.identitySim.url}/sandbox/vnin`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ nin: '50010000001', enterprise_code: stack.config.nimcEnterpriseCode }) });
    const { vnin } = (await issued.json()) as { vnin: string };
    expect((await stack.api('GET', '/v1/nimc-reasons', { token: org.member.token })).status).toBe(200);
    const call = () => stack.api('POST', '/v1/verify-nin/match', { token: org.member.token, json: { vnin, reason: 'corporate', fname: 'A', lname: 'B' }, headers: { 'Idempotency-Key': `match-vnin-${org.orgId}` } });
    const first = await call();
    expect(first.status).toBe(502);
    expect(first.body.detail).toContain('ask the person for a new one');
    const calls = stack.identitySim.stats().calls;
    const second = await call();
    expect(second.status).toBe(502);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body.reference_id).toBe(first.body.reference_id);
    expect(stack.identitySim.stats().calls).toBe(calls);
    expect(await wallet(org.orgId)).toEqual({ units: 3, reserved: 0 });
  });
});
