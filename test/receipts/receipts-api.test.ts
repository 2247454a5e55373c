import { createHash } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { tablesHolding } from '../setup/db-search.ts';
import { HOPPER_NIN, makeLink, openPage, sandboxVnin, submitPage } from '../setup/links.ts';
import { startSmtpSink, type SmtpSink } from '../setup/smtp.ts';
import { waitFor } from '../setup/wait.ts';

/**
 * The person's consent receipt over HTTP: given after a link's submission at /r/<token> (its token
 * kept only as a hash), the same JSON for the organisation at GET /v1/verifications/{id}/receipt
 * (another organisation's reads as unknown), a receipt for an API verification with consent and a
 * 404 that says why without one, e-mailed once to the typed address which is then kept nowhere,
 * and erased with its verification.
 */
const FIELDS_27560 = [
  'schema_version', 'record_id', 'receipt_id', 'pii_principal_id', 'language', 'jurisdiction', 'party_identification', 'pii_controllers', 'controller',
  'purpose', 'lawful_basis', 'collection_method', 'pii_information', 'retention_period', 'results', 'event', 'privacy_notice', 'recipient_third_parties',
  'privacy_rights', 'withdrawal_method',
];

let stack: Stack;
let smtp: SmtpSink;

beforeAll(async () => {
  smtp = await startSmtpSink();
  stack = await startStack({ env: { SMTP_URL: smtp.url } });
}, 60_000);
afterAll(async () => {
  await stack?.close();
  await smtp?.close();
});

/** A link submission without a face, as the page sends it; its answer and its verification's record. */
async function submitted(org: OrgFixture) {
  const link = await makeLink(stack, org.admin.token, { require_face: false, purpose: 'Opening your savings account' });
  const { csrf } = await openPage(stack, link.url);
  const vnin = await sandboxVnin(stack, HOPPER_NIN);
  const answer = await submitPage(stack, link.url, { csrf, vnin });
  expect(answer.status, answer.text).toBe(200);
  const receipt = (answer.body as { receipt?: string }).receipt!;
  expect(receipt).toMatch(/^\/r\/[A-Za-z0-9_-]{22}$/);
  const [s] = (await stack.api('GET', `/v1/verification-links/${link.id}`, { token: org.admin.token })).body.submissions;
  const record = (await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: s.reference_id } })).body.data;
  return { receipt, vnin, referenceId: s.reference_id as string, record: record as Record<string, string> };
}

/** The person's data as strings a receipt must never hold. */
const personal = (record: Record<string, string>, vnin: string) =>
  [vnin, record.nin, record.fname, record.lname, record.mname, record.phone, record.dob, record.image?.slice(0, 40)].filter((v): v is string => typeof v === 'string' && v.length >= 3);

describe('the consent receipt', () => {
  it('When a link submission went through, then /r/<token>.json holds every ISO/IEC TS 27560 field and no personal data, the token is kept only as its hash, and the organisation reads the same JSON (another organisation: 404)', async () => {
    const org = await stack.createOrg({ units: 5 });
    const other = await stack.createOrg({ units: 1 });
    const { receipt, vnin, referenceId, record } = await submitted(org);
    expect(record.nin).toBe(HOPPER_NIN);

    const r = await fetch(`${stack.url}${receipt}.json`);
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    const text = await r.text();
    const json = JSON.parse(text) as Record<string, any>;
    for (const f of FIELDS_27560) expect(Object.hasOwn(json, f), f).toBe(true);
    expect(json).toMatchObject({
      record_id: referenceId,
      receipt_id: `RCP-${referenceId}`,
      pii_principal_id: null,
      controller: { party_name: expect.any(String), support_contact: null },
      purpose: { reason: 'corporate', description: 'Opening your savings account', purpose_type: 'Identity verification' },
      lawful_basis: { basis: 'consent' },
      collection_method: 'web',
      results: { verification: 'found', face: null, liveness: null, verdict: 'verified', verdict_reasons: [] },
      event: [{ event_type: 'explicit', event_state: 'consent given', given_by: 'person' }],
    });
    expect(json.privacy_notice.text).toMatch(/^I agree that .+ may check my identity/);
    expect(json.privacy_rights.map((x: { right: string }) => x.right)).toEqual(['access', 'erasure', 'complaint']);
    expect(json.privacy_rights[2].how).toContain('https://ndpc.gov.ng');
    expect(json.party_identification.map((p: { party_role: string }) => p.party_role)).toEqual(['PII controller', 'PII processor', 'Data protection authority']);
    for (const value of personal(record, vnin)) expect(text.toLowerCase(), 'personal data in the receipt').not.toContain(value.toLowerCase());

    // The token: only its SHA-256 is kept, and nowhere in the database is the token itself.
    const token = receipt.slice(3);
    const hash = createHash('sha256').update(token).digest();
    const stored = await stack.db.one(sql.type(z.object({ reference_id: z.string(), token_hash: z.instanceof(Buffer) }))`SELECT reference_id, token_hash FROM consent_receipts WHERE reference_id = ${referenceId}`);
    expect(stored.token_hash.equals(hash)).toBe(true);
    expect(await tablesHolding(stack.db, token)).toEqual([]);

    // Content negotiation on the bare address; the organisation's copy is the same document.
    const negotiated = await fetch(`${stack.url}${receipt}`, { headers: { accept: 'application/json' } });
    expect(await negotiated.json()).toEqual(json);
    const own = await stack.api('GET', `/v1/verifications/${referenceId}/receipt`, { token: org.member.token });
    expect(own.status).toBe(200);
    expect(own.body).toEqual(json);
    const foreign = await stack.api('GET', `/v1/verifications/${referenceId}/receipt`, { token: other.admin.token });
    expect(foreign.status).toBe(404);
    expect(foreign.body.detail).toBe('Unknown reference_id');
    expect((await stack.api('GET', '/v1/verifications/nonsense/receipt', { token: org.member.token })).status).toBe(400);
    expect((await fetch(`${stack.url}/r/AAAAAAAAAAAAAAAAAAAAAA.json`)).status).toBe(404);
  });

  it('When a link submission\'s vNIN is not found, then the answer that sends the person back to the vNIN step still names its reference and receipt, which says not found and not verified with the organisation\'s support contact, and the organisation reads the same', async () => {
    const org = await stack.createOrg({ units: 5 });
    const contact = 'Write to help@bank.example or call 0803 123 4567';
    expect((await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: { support_contact: contact } })).status).toBe(200);
    const link = await makeLink(stack, org.admin.token, { require_face: false });
    const { csrf } = await openPage(stack, link.url);
    // The fixture vNIN NIMC does not know: a verification is recorded (free), the person gets a receipt.
    const answer = await submitPage(stack, link.url, { csrf, vnin: 'AA000000000009ZZ' });
    expect(answer.status, answer.text).toBe(404);
    const body = answer.body as { code?: string; step?: string; reference_id?: string; receipt?: string };
    expect(body).toMatchObject({ code: 'vnin_not_found', step: 'vnin', reference_id: expect.stringMatching(/^REF-[A-Z0-9]{12}$/), receipt: expect.stringMatching(/^\/r\/[A-Za-z0-9_-]{22}$/) });
    const r = await fetch(`${stack.url}${body.receipt}.json`);
    expect(r.status).toBe(200);
    const json = (await r.json()) as Record<string, any>;
    for (const f of FIELDS_27560) expect(Object.hasOwn(json, f), f).toBe(true);
    expect(json).toMatchObject({ record_id: body.reference_id, controller: { support_contact: contact }, results: { verification: 'not_found', face: null, verdict: 'not_verified', verdict_reasons: ['not_found'] } });
    // No record was received: nothing of it is kept.
    expect(json.pii_information[1]).toMatchObject({ kept: 'Not kept: no record was received', kept_until: null });
    expect(JSON.stringify(json)).not.toContain('AA000000000009ZZ');
    const page = await fetch(`${stack.url}${body.receipt}`);
    expect(await page.text()).toContain('Not verified: no record was found');
    const own = await stack.api('GET', `/v1/verifications/${body.reference_id}/receipt`, { token: org.member.token });
    expect(own.body).toEqual(json);
  });

  it('When the organisation verified over the API with a consent, then it has the same receipt (given by the organisation, no notice text); without a consent, a 404 says so', async () => {
    const org = await stack.createOrg({ units: 5 });
    const consent = { obtained_at: new Date().toISOString(), channel: 'in_person', notice_version: 'privacy-2026-03' };
    const withConsent = await stack.api('POST', '/v1/verify-nin/vnin', { token: org.member.token, json: { vnin: await sandboxVnin(stack, HOPPER_NIN), reason: 'corporate', consent } });
    expect(withConsent.status, withConsent.text).toBe(200);
    const ref = withConsent.body.data.reference_id as string;
    const r = await stack.api('GET', `/v1/verifications/${ref}/receipt`, { token: org.member.token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      record_id: ref,
      collection_method: 'in_person',
      privacy_notice: { version: 'privacy-2026-03', text: null },
      purpose: { description: null },
      event: [{ event_time: new Date(consent.obtained_at).toISOString(), given_by: 'organisation' }],
    });

    const without = await stack.api('POST', '/v1/verify-nin/vnin', { token: org.member.token, json: { vnin: await sandboxVnin(stack, HOPPER_NIN), reason: 'corporate' } });
    expect(without.status).toBe(200);
    const none = await stack.api('GET', `/v1/verifications/${without.body.data.reference_id}/receipt`, { token: org.member.token });
    expect(none.status).toBe(404);
    expect(none.body).toMatchObject({ code: 'receipt_no_consent', detail: expect.stringMatching(/^This verification has no consent receipt: no consent was recorded/) });
  });

  it('When the person asks for it by e-mail, then it is sent once to the typed address, which is kept nowhere once sent; a fourth sending within the hour is refused', async () => {
    const org = await stack.createOrg({ units: 5 });
    const { receipt, vnin, record } = await submitted(org);
    const address = `person-${Date.now()}@example.net`;
    const before = smtp.messages.length;
    const sent = await fetch(`${stack.url}${receipt}/email`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ email: address }) });
    expect(sent.status).toBe(303);
    expect(sent.headers.get('location')).toBe(`${receipt}?sent=1`);
    const [mail] = (await smtp.waitFor(before + 1)).slice(before);
    expect(mail!.to).toEqual([address]);
    expect(mail!.raw).toContain('Your consent receipt');
    for (const value of personal(record, vnin)) expect(mail!.raw.toLowerCase()).not.toContain(value.toLowerCase());
    // Sent: the outbox row is done and its sealed body (with the address) erased; the address is nowhere.
    await waitFor(async () => (await stack.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM outbox WHERE kind = 'consent_receipt_email' AND status = 'sent' AND body_enc IS NULL`)) >= 1, { what: 'receipt e-mail marked sent' });
    expect(smtp.messages.filter((m) => m.to.includes(address))).toHaveLength(1);
    expect(await tablesHolding(stack.db, address)).toEqual([]);

    const bad = await fetch(`${stack.url}${receipt}/email`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ email: 'not an address' }) });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('Enter an e-mail address');
    const foreign = await fetch(`${stack.url}${receipt}/email`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://elsewhere.example' }, body: new URLSearchParams({ email: address }) });
    expect(foreign.status).toBe(403);

    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const again = await fetch(`${stack.url}${receipt}/email`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ email: address }) });
      statuses.push(again.status);
    }
    expect(statuses).toEqual([303, 303, 429]);
  });

  it('When its verification is erased, then its receipt goes with it: the row is gone and /r/<token> answers 404', async () => {
    const org = await stack.createOrg({ units: 5 });
    const { receipt, referenceId } = await submitted(org);
    expect((await fetch(`${stack.url}${receipt}`)).status).toBe(200);
    // The very statement retention's erasure runs.
    await stack.db.query(sql.unsafe`UPDATE verifications SET record_enc = NULL, query_enc = NULL, status = 'expired' WHERE reference_id = ${referenceId}`);
    expect(await stack.db.oneFirst(sql.unsafe`SELECT count(*)::int FROM consent_receipts WHERE reference_id = ${referenceId}`)).toBe(0);
    const page = await fetch(`${stack.url}${receipt}`);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('No receipt here');
    const own = await stack.api('GET', `/v1/verifications/${referenceId}/receipt`, { token: org.member.token });
    expect(own.status).toBe(404);
    expect(own.body.code).toBe('receipt_erased');
  });
});
