import { randomBytes } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaystackClient } from '../../src/adapters/payment-processor/paystack.ts';
import { jobIds, QUEUES } from '../../src/jobs/catalog.ts';
import { createUser } from '../../src/modules/organisations/index.ts';
import { runAutoCharge, sweepTopups } from '../../src/modules/topup/index.ts';
import { adjustWallet } from '../../src/modules/wallet/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { finishedJob, queuesIdle } from '../setup/jobs.ts';
import { decodeQuotedPrintable, startSmtpSink, type SmtpSink } from '../setup/smtp.ts';
import { waitFor } from '../setup/wait.ts';

// Automatic top-up. A debit that leaves the balance below the line queues one charge
// (in the debit's statement), a worker charges the saved card through charge_authorization and credits
// it through the checkout's exactly-once path (invoice, receipt); max_per_day; a declined card turns it
// off and e-mails the administrators; a crash between the charge and its record is settled by the sweep.

const q = sql.type(z.record(z.string(), z.any()));
const GOOD_CARD = '4084084084084081';
const DECLINING_CARD = '4084080000000409';
const VERVE_CARD = '5060666666666666666';
const ACCOUNTS_ONLY = { detail: 'Only organisation administrators and finance officers may do this' };

let smtp: SmtpSink;
let stack: Stack;
beforeAll(async () => {
  smtp = await startSmtpSink();
  stack = await startStack({ captureLogs: true, env: { SMTP_URL: smtp.url, RATE_LIMIT_PER_TOKEN: '10000', RATE_LIMIT_PER_ORG: '10000' } });
});
afterAll(async () => {
  await stack?.close();
  await smtp?.close();
});

type Org = OrgFixture & { email: string };

/** An organisation whose administrator has an e-mail address (receipts and alerts go there). */
async function newOrg(units = 0): Promise<Org> {
  const org = await stack.createOrg({ units, maxInFlight: 64 });
  const email = `boss-${org.orgId}@bank.example`;
  await stack.db.query(q`UPDATE users SET email = ${email} WHERE username = ${org.admin.username}`);
  return { ...org, email };
}

/** One checkout top-up of `units` paid with `card`, credited through verify: its card becomes the saved card. */
async function topUpByCard(org: Org, card = GOOD_CARD, units = 100): Promise<string> {
  const init = await stack.api('POST', '/v1/topup/initialize', { token: org.admin.token, form: { units } });
  expect(init.status).toBe(200);
  const paid = await fetch(`${stack.paymentSim.url}/__sim/transactions/${init.body.reference}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ card, webhook: 'none' }),
  });
  expect(paid.status).toBe(200);
  const verified = await stack.api('POST', '/v1/topup/verify', { token: org.admin.token, form: { reference: init.body.reference } });
  expect(verified.body.message).toBe('Top-up successful');
  return init.body.reference as string;
}

const settings = (o: { enabled?: boolean; below_units?: number; units?: number; max_per_day?: number } = {}) => ({ enabled: true, below_units: 50, units: 1000, max_per_day: 2, ...o });

async function putAuto(org: Org, body: Record<string, unknown>, who: { token: string; password: string } = org.admin) {
  return stack.api('PUT', '/v1/settings/auto-topup', { token: who.token, json: { password: who.password, ...body } });
}

let nin = 24000000000;
async function verify(org: Org): Promise<void> {
  const r = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: String(++nin), reason: 'corporate' } });
  expect(r.status).toBe(200);
}

const units = (orgId: number) => stack.db.oneFirst(sql.type(z.object({ units: z.number() }))`SELECT units::int FROM wallets WHERE org_id = ${orgId}`);
const charges = (orgId: number) => stack.db.any(q`SELECT id::int, status, units, below_units, reference, card, detail FROM auto_topup_charges WHERE org_id = ${orgId} ORDER BY id`);
const mailsTo = (address: string, subject: RegExp) => smtp.messages.filter((m) => m.to.includes(address) && subject.test(decodeQuotedPrintable(m.raw)));

/** Waits until every charge of the organisation has ended and nothing is left in any queue. */
async function chargesSettled(orgId: number) {
  // A day's cap reached is a skip the debit's trigger records: no job ran it.
  for (const c of await charges(orgId)) if (c.detail !== 'daily cap reached') await finishedJob(stack, QUEUES.credits, jobIds.autoCharge(c.id));
  await queuesIdle(stack);
  return charges(orgId);
}

describe('automatic top-up', () => {
  it('When 50 concurrent verifications cross the line, then exactly one charge buys the units with the saved card, credited once with its invoice and an automatic receipt', { timeout: 90_000 }, async () => {
    const org = await newOrg(60);
    const cardReference = await topUpByCard(org);
    expect(await units(org.orgId)).toBe(160);
    const saved = await putAuto(org, settings({ below_units: 130, units: 1000, max_per_day: 5 }));
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ enabled: true, below_units: 130, units: 1000, max_per_day: 5, turned_off: null, charges_today: 0, card: { card_type: 'visa', last4: '4081', from_reference: cardReference, declined_at: null } });

    await Promise.all(Array.from({ length: 50 }, () => verify(org)));
    const [charge, ...more] = await chargesSettled(org.orgId);
    expect(more).toEqual([]);
    expect(charge).toMatchObject({ status: 'credited', units: 1000, below_units: 130, card: 'visa ending 4081', detail: null });
    expect(await units(org.orgId)).toBe(160 - 50 + 1000);

    // One ledger credit for the charge's reference, through the checkout's path: its invoice, its audit event.
    const lines = await stack.db.any(q`SELECT units_delta::int, reference FROM wallet_transactions WHERE org_id = ${org.orgId} AND kind = 'topup' ORDER BY id`);
    expect(lines).toEqual([{ units_delta: 100, reference: cardReference }, { units_delta: 1000, reference: charge!.reference }]);
    const invoice = await stack.api('GET', `/v1/topups/${charge!.reference}/invoice`, { token: org.admin.token });
    expect({ status: invoice.status, type: invoice.headers.get('content-type') }).toMatchObject({ status: 200, type: expect.stringContaining('application/pdf') });
    const topup = (await stack.api('GET', `/v1/topups/${charge!.reference}`, { token: org.admin.token })).body;
    expect(topup).toMatchObject({ status: 'credited', units: 1000, invoice_number: expect.stringMatching(/^INV-\d{4}-\d{6}$/) });
    const credited = await stack.db.one(q`SELECT actor, details FROM audit_events WHERE org_id = ${org.orgId} AND action = 'topup.credited' AND target = ${charge!.reference}`);
    expect(credited).toMatchObject({ actor: 'system', details: { automatic: true, units: 1000 } });

    // The e-mail of the charge: the receipt, saying it was automatic and which card paid.
    const receipt = await waitFor(() => mailsTo(org.email, /Subject: Automatic top-up: payment receipt/)[0], { what: 'the automatic top-up receipt' });
    const text = decodeQuotedPrintable(receipt.raw).replace(/\r?\n/g, ' ');
    expect(text).toContain(charge!.reference);
    expect(text).toMatch(/fell below 130 units, so 1,000 units were charged to the visa ending 4081/);

    const after = (await stack.api('GET', '/v1/settings/auto-topup', { token: org.admin.token })).body;
    expect(after).toMatchObject({ enabled: true, charges_today: 1, recent_charges: [{ status: 'credited', reference: charge!.reference, units: 1000 }] });
    // Each charge says what the card was asked for in kobo: its top-up's total, as the quote prices 1000 units.
    const quote = (await stack.api('GET', '/v1/topup/quote?units=1000', { token: org.admin.token })).body;
    expect(after.recent_charges[0].total_amount_kobo).toBe(topup.total_amount);
    expect(after.recent_charges[0].total_amount_kobo).toBe(quote.total_amount);
  });

  it('When the daily limit is reached, then a balance below the line queues no further charge, records one skip for the day and e-mails the administrators and finance officers once; a higher limit lets the next debit charge again', { timeout: 60_000 }, async () => {
    const org = await newOrg();
    const financeEmail = `finance-${org.orgId}@bank.example`;
    await stack.addUser(org.orgId, { role: 'finance', email: financeEmail });
    await topUpByCard(org);
    expect((await putAuto(org, settings({ below_units: 100, units: 100, max_per_day: 1 }))).status).toBe(200);

    await verify(org);
    expect(await chargesSettled(org.orgId)).toEqual([expect.objectContaining({ status: 'credited', units: 100 })]);
    expect(await units(org.orgId)).toBe(199);

    // Below the line again, by an operator's debit and a verification: today's one charge is spent.
    await adjustWallet(stack.db, org.orgId, -150, 'test debit');
    await verify(org);
    expect(await chargesSettled(org.orgId)).toEqual([
      expect.objectContaining({ status: 'credited', units: 100 }),
      expect.objectContaining({ status: 'skipped', units: 100, detail: 'daily cap reached' }),
    ]);
    expect(await units(org.orgId)).toBe(48);
    // Told once (the verification's debit announced the skip the operator's debit recorded); a later
    // debit within the day records no second skip.
    const [skipMail] = await waitFor(() => {
      const m = mailsTo(org.email, /Automatic top-up skipped/);
      return m.length > 0 ? m : undefined;
    }, { what: 'the automatic top-up skipped e-mail' });
    expect(skipMail!.to.sort()).toEqual([org.email, financeEmail].sort());
    expect(decodeQuotedPrintable(skipMail!.raw)).toContain('the automatic top-ups allowed per day (max_per_day) were all made today');
    await verify(org);
    expect(await chargesSettled(org.orgId)).toHaveLength(2);
    expect(await stack.db.oneFirst(q`SELECT count(*)::int AS n FROM outbox WHERE kind = 'auto_topup_skipped_email' AND dedupe_key LIKE 'auto-topup-skipped-%' AND id IN (SELECT outbox_id FROM mail_windows WHERE org_id = ${org.orgId})`)).toBe(1);
    expect((await stack.api('GET', '/v1/settings/auto-topup', { token: org.admin.token })).body).toMatchObject({ charges_today: 1, max_per_day: 1 });

    expect((await putAuto(org, settings({ below_units: 100, units: 100, max_per_day: 2 }))).status).toBe(200);
    await verify(org);
    const all = await chargesSettled(org.orgId);
    expect(all.map((c) => c.status)).toEqual(['credited', 'skipped', 'credited']);
    expect(await units(org.orgId)).toBe(146);
  });

  it('When a queued charge finds no card it may charge, then it is skipped and the administrators are e-mailed why; a second skip within the hour is counted, not e-mailed', { timeout: 60_000 }, async () => {
    const org = await newOrg(20);
    await topUpByCard(org);
    expect((await putAuto(org, settings({ below_units: 200, units: 100, max_per_day: 5 }))).status).toBe(200);
    // The card becomes unusable behind the settings' back (as a decline recorded by another path would).
    await stack.db.query(q`UPDATE saved_cards SET declined_at = now() WHERE org_id = ${org.orgId}`);
    await verify(org);
    expect(await chargesSettled(org.orgId)).toEqual([expect.objectContaining({ status: 'skipped', detail: 'the saved card was declined' })]);
    const [mail] = await waitFor(() => {
      const m = mailsTo(org.email, /Automatic top-up skipped/);
      return m.length > 0 ? m : undefined;
    }, { what: 'the skipped e-mail' });
    expect(decodeQuotedPrintable(mail!.raw)).toContain('was not made: the saved card was declined');

    await verify(org);
    const window = await waitFor(async () => {
      const w = await stack.db.maybeOne(q`SELECT held_back FROM mail_windows WHERE org_id = ${org.orgId} AND topic = 'auto_topup_skipped'`);
      return w && w.held_back === 1 ? w : undefined;
    }, { what: 'the second skip counted in the hour' });
    expect(window.held_back).toBe(1);
    expect(await stack.db.oneFirst(q`SELECT count(*)::int AS n FROM outbox WHERE kind = 'auto_topup_skipped_email' AND dedupe_key IN (SELECT 'auto-topup-skipped-' || id FROM auto_topup_charges WHERE org_id = ${org.orgId})`)).toBe(1);
  });

  it('When a queued charge finds no saved card at all, then it is skipped and the administrators and finance officers are e-mailed that there is no saved card', { timeout: 60_000 }, async () => {
    const org = await newOrg(20);
    const financeEmail = `finance-${org.orgId}@bank.example`;
    await createUser(stack.db, { orgId: org.orgId, username: `fin-${randomBytes(3).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}`, role: 'finance', email: financeEmail, requirePasswordChange: false });
    await topUpByCard(org);
    expect((await putAuto(org, settings({ below_units: 200, units: 100, max_per_day: 5 }))).status).toBe(200);
    // The card is gone behind the settings' back.
    await stack.db.query(q`DELETE FROM saved_cards WHERE org_id = ${org.orgId}`);
    await verify(org);
    expect(await chargesSettled(org.orgId)).toEqual([expect.objectContaining({ status: 'skipped', detail: 'no saved card' })]);
    const [mail] = await waitFor(() => {
      const m = mailsTo(org.email, /Automatic top-up skipped/);
      return m.length > 0 ? m : undefined;
    }, { what: 'the skipped e-mail' });
    expect(mail!.to).toEqual(expect.arrayContaining([org.email, financeEmail]));
    expect(decodeQuotedPrintable(mail!.raw)).toContain('was not made: no saved card');
  });

  it('When the saved card is declined, then automatic top-up turns itself off, nothing is credited, the card is not charged again, and every administrator and finance officer gets an e-mail', { timeout: 60_000 }, async () => {
    const org = await newOrg(20);
    const second = { username: `i34-admin2-${randomBytes(3).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
    await createUser(stack.db, { orgId: org.orgId, ...second, role: 'org_admin', requirePasswordChange: false });
    const secondEmail = `second-${org.orgId}@bank.example`;
    await stack.db.query(q`UPDATE users SET email = ${secondEmail} WHERE username = ${second.username}`);
    const financeEmail = `finance-${org.orgId}@bank.example`;
    await createUser(stack.db, { orgId: org.orgId, username: `fin-${randomBytes(3).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}`, role: 'finance', email: financeEmail, requirePasswordChange: false });
    await topUpByCard(org, DECLINING_CARD);
    expect((await putAuto(org, settings({ below_units: 120 }))).body).toMatchObject({ enabled: true, card: { last4: '0409' } });

    await verify(org);
    const [charge] = await chargesSettled(org.orgId);
    expect(charge).toMatchObject({ status: 'declined', detail: 'Declined', card: 'visa ending 0409' });
    expect(await units(org.orgId)).toBe(119);
    expect(await stack.db.oneFirst(q`SELECT status FROM topups WHERE reference = ${charge!.reference}`)).toBe('failed');
    const now = (await stack.api('GET', '/v1/settings/auto-topup', { token: org.admin.token })).body;
    expect(now).toMatchObject({ enabled: false, turned_off: { reason: 'card_declined' }, card: { last4: '0409', declined_at: expect.any(String) } });
    const event = await stack.db.one(q`SELECT actor, target, details FROM audit_events WHERE org_id = ${org.orgId} AND action = 'auto_topup.declined'`);
    expect(event).toEqual({ actor: 'system', target: charge!.reference, details: { units: 1000, card: 'visa ending 0409', reason: 'Declined' } });

    const mail = await waitFor(() => mailsTo(org.email, /Subject: Automatic top-up turned off: the card was declined/)[0], { what: 'the decline e-mail' });
    expect(mail.to).toEqual(expect.arrayContaining([org.email, secondEmail, financeEmail]));
    const text = decodeQuotedPrintable(mail.raw).replace(/\r?\n/g, ' ');
    expect(text).toContain('declined on the visa ending 0409');
    expect(text).toContain(`${stack.config.publicBaseUrl}/portal/top-up`);

    // Off: the next debits queue nothing, and the declined card cannot turn it back on.
    await verify(org);
    expect(await chargesSettled(org.orgId)).toHaveLength(1);
    expect(await putAuto(org, settings({ below_units: 120 }))).toMatchObject({ status: 409, body: { detail: expect.stringContaining('The saved card was declined') } });
    // A top-up with a card that works replaces it.
    await topUpByCard(org, GOOD_CARD);
    expect((await putAuto(org, settings({ below_units: 120 }))).body).toMatchObject({ enabled: true, turned_off: null, card: { last4: '4081', declined_at: null } });
  });

  it('When the worker dies after the processor charged the card and before anything was recorded, then the top-up sweep credits it once and the charge ends', { timeout: 60_000 }, async () => {
    const org = await newOrg(10);
    await topUpByCard(org);
    expect((await putAuto(org, settings({ below_units: 100, units: 500 }))).status).toBe(200);
    // An operator's debit queues the charge; no worker hears of it until the sweep.
    await adjustWallet(stack.db, org.orgId, -20, 'test debit');
    const [queued] = await charges(org.orgId);
    expect(queued).toMatchObject({ status: 'queued', units: 500 });

    const deps = stack.workers!.deps;
    const dying: PaystackClient = {
      ...deps.processor,
      async chargeAuthorization(input) {
        // No webhook either: only the sweep may find out.
        await deps.processor.chargeAuthorization({ ...input, metadata: { ...input.metadata, sim_webhook: 'none' } });
        throw new Error('worker killed after the processor answered');
      },
    };
    await expect(runAutoCharge({ ...deps, processor: dying }, queued!.id, deps.logger)).rejects.toThrow('worker killed');
    const [charging] = await charges(org.orgId);
    expect(charging).toMatchObject({ status: 'charging', reference: expect.stringMatching(/^TOP-/) });
    expect(await stack.db.oneFirst(q`SELECT status FROM topups WHERE reference = ${charging!.reference}`)).toBe('pending');
    expect(await units(org.orgId)).toBe(90);

    const later = { now: () => new Date(Date.now() + 3600_000) };
    await sweepTopups({ ...deps, clock: later }, deps.logger);
    expect(await charges(org.orgId)).toEqual([expect.objectContaining({ status: 'credited', reference: charging!.reference })]);
    expect(await units(org.orgId)).toBe(590);
    expect(await stack.db.oneFirst(q`SELECT count(*)::int FROM invoices WHERE topup_reference = ${charging!.reference}`)).toBe(1);
    // The job's retry finds it over, and the processor holds one charge of that reference.
    expect(await runAutoCharge(deps, queued!.id, deps.logger)).toEqual({ outcome: 'ended', detail: 'credited' });
    expect(await stack.db.oneFirst(q`SELECT count(*)::int FROM wallet_transactions WHERE reference = ${charging!.reference}`)).toBe(1);
  });

  it('When a retry follows a run whose answer was lost, then it asks the processor first and credits without charging again', { timeout: 60_000 }, async () => {
    const org = await newOrg(10);
    await topUpByCard(org);
    expect((await putAuto(org, settings({ below_units: 100, units: 200 }))).status).toBe(200);
    await adjustWallet(stack.db, org.orgId, -20, 'test debit');
    const [queued] = await charges(org.orgId);
    const deps = stack.workers!.deps;
    let charged = 0;
    const lost: PaystackClient = {
      ...deps.processor,
      async chargeAuthorization(input) {
        charged++;
        await deps.processor.chargeAuthorization({ ...input, metadata: { ...input.metadata, sim_webhook: 'none' } });
        throw new Error('answer lost');
      },
    };
    await expect(runAutoCharge({ ...deps, processor: lost }, queued!.id, deps.logger)).rejects.toThrow('answer lost');
    const retried = await runAutoCharge({ ...deps, processor: lost }, queued!.id, deps.logger);
    expect(retried).toMatchObject({ outcome: 'credited' });
    expect(charged).toBe(1);
    expect(await units(org.orgId)).toBe(290);
    expect(await charges(org.orgId)).toEqual([expect.objectContaining({ status: 'credited' })]);
  });

  it('When a card is saved and charged, then its authorization code is stored only sealed and appears in no log, event, ledger line, e-mail or job', { timeout: 60_000 }, async () => {
    const org = await newOrg(10);
    const cardReference = await topUpByCard(org);
    const code = (await stack.workers!.deps.processor.verify(cardReference)).authorization!.code;
    expect(code).toMatch(/^AUTH_/);
    expect((await putAuto(org, settings({ below_units: 110, units: 100 }))).status).toBe(200);
    await verify(org);
    expect(await chargesSettled(org.orgId)).toEqual([expect.objectContaining({ status: 'credited' })]);
    await waitFor(() => mailsTo(org.email, /Subject: Automatic top-up: payment receipt/)[0], { what: 'the receipt' });

    const sealed = await stack.db.one(q`SELECT key_id, authorization_enc FROM saved_cards WHERE org_id = ${org.orgId}`);
    expect(sealed.authorization_enc.includes(Buffer.from(code))).toBe(false);
    const stored = await stack.db.oneFirst(q`
      SELECT concat_ws(' ', (SELECT string_agg(payload::text, ' ') FROM processor_events), (SELECT string_agg(details::text, ' ') FROM audit_events),
                       (SELECT string_agg(details::text, ' ') FROM wallet_transactions), (SELECT string_agg(payload::text, ' ') FROM outbox),
                       (SELECT string_agg(coalesce(detail, '') || coalesce(card, ''), ' ') FROM auto_topup_charges))`);
    expect(stored).not.toContain(code);
    expect(stack.logs.length).toBeGreaterThan(0);
    expect(stack.logs.filter((l) => l.includes(code))).toEqual([]);
    expect(smtp.messages.filter((m) => m.raw.includes(code))).toEqual([]);
  });

  it('When settings are read before any were saved, then automatic top-up is off with no numbers, and no card until a card top-up', async () => {
    const org = await newOrg();
    const r = await stack.api('GET', '/v1/settings/auto-topup', { token: org.admin.token });
    expect(r).toMatchObject({ status: 200, body: { enabled: false, below_units: null, units: null, max_per_day: null, turned_off: null, card: null, charges_today: 0, recent_charges: [] } });
  });

  it('When PUT breaks a rule, then 400 with a detail; a missing or mistyped field is 422; nothing is saved', async () => {
    const org = await newOrg();
    await topUpByCard(org);
    const cases: [Record<string, unknown>, number, string][] = [
      [settings({ below_units: 0 }), 400, 'below_units: below_units must be from 1 to 1000000000'],
      [settings({ units: 150 }), 400, 'units must be a positive integer multiple of 100'],
      [settings({ units: 2_000_000 }), 400, 'units must be at most 1000000 per top-up'],
      [settings({ max_per_day: 11 }), 400, 'max_per_day: max_per_day must be from 1 to 10'],
      [settings({ max_per_day: 1.5 }), 422, 'Invalid type for max_per_day: max_per_day must be a whole number'],
      [{ ...settings(), colour: 'red' }, 400, 'Unrecognized key: "colour"'],
      [{ ...settings(), password: '' }, 400, 'password: password must not be empty'],
      [{ below_units: 50, units: 1000, max_per_day: 2 }, 422, 'Field required: enabled'],
      [{ ...settings(), enabled: 'yes' }, 422, 'Invalid type for enabled'],
    ];
    for (const [body, status, detail] of cases) {
      const r = await stack.api('PUT', '/v1/settings/auto-topup', { token: org.admin.token, json: { password: org.admin.password, ...body } });
      expect({ body, status: r.status, detail: r.body.detail }).toEqual({ body, status, detail: expect.stringContaining(detail) });
    }
    const minimum = await stack.createOrg({ minTopupUnits: 500 });
    const below = await stack.api('PUT', '/v1/settings/auto-topup', { token: minimum.admin.token, json: { password: minimum.admin.password, ...settings({ units: 200, enabled: false }) } });
    expect(below).toMatchObject({ status: 400, body: { detail: 'units is below the plan minimum of 500 units' } });
    expect(await stack.db.oneFirst(q`SELECT count(*)::int FROM auto_topup_settings WHERE org_id IN (${org.orgId}, ${minimum.orgId})`)).toBe(0);
  });

  it('When the password is wrong, then 403 with a detail, nothing changes, and the failure counts as a failed sign-in', async () => {
    const org = await newOrg();
    await topUpByCard(org);
    expect((await putAuto(org, settings({ enabled: false }))).status).toBe(200);
    const wrong = await stack.api('PUT', '/v1/settings/auto-topup', { token: org.admin.token, json: { ...settings(), password: 'not-my-password' } });
    expect(wrong).toMatchObject({ status: 403, body: { detail: 'Password is incorrect: automatic top-up was not changed' } });
    expect((await stack.api('GET', '/v1/settings/auto-topup', { token: org.admin.token })).body.enabled).toBe(false);
    // The session goes on (a 403, not a 401), and the right password still works.
    expect((await putAuto(org, settings())).body.enabled).toBe(true);
    const events = await stack.db.any(q`SELECT actor, details FROM audit_events WHERE org_id = ${org.orgId} AND action = 'auto_topup.settings_changed' ORDER BY id`);
    expect(events).toEqual([
      { actor: expect.stringMatching(/^user:\d+$/), details: { enabled: false, below_units: 50, units: 1000, max_per_day: 2 } },
      { actor: expect.stringMatching(/^user:\d+$/), details: { enabled: true, below_units: 50, units: 1000, max_per_day: 2 } },
    ]);
  });

  it('When turning it on without a card the processor keeps, then 409: no card top-up yet, or only a card that is not reusable', async () => {
    const org = await newOrg();
    expect(await putAuto(org, settings())).toMatchObject({ status: 409, body: { detail: expect.stringContaining('No saved card to charge') } });
    // Off may be saved without a card.
    expect((await putAuto(org, settings({ enabled: false }))).status).toBe(200);
    await topUpByCard(org, VERVE_CARD);
    expect(await putAuto(org, settings())).toMatchObject({ status: 409, body: { detail: expect.stringContaining('cannot be charged again') } });
  });

  it('When a finance officer sets it, then 200; a team member and API clients (administrator or finance) are refused with 403 and a detail', async () => {
    const org = await newOrg();
    await topUpByCard(org);
    const fin = { username: `i34-fin-${randomBytes(3).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
    await createUser(stack.db, { orgId: org.orgId, ...fin, role: 'finance', requirePasswordChange: false });
    const finance = { token: await stack.login(fin.username, fin.password), password: fin.password };
    expect((await putAuto(org, settings(), finance)).body).toMatchObject({ enabled: true });
    expect((await stack.api('GET', '/v1/settings/auto-topup', { token: finance.token })).status).toBe(200);

    expect(await putAuto(org, settings(), org.member)).toMatchObject({ status: 403, body: ACCOUNTS_ONLY });
    expect(await stack.api('GET', '/v1/settings/auto-topup', { token: org.member.token })).toMatchObject({ status: 403, body: ACCOUNTS_ONLY });
    for (const role of ['org_admin', 'finance']) {
      const client = await stack.api('POST', '/v1/api-clients', { token: org.admin.token, json: { name: `i34 ${role}`, role, scopes: ['topup', 'history:read'] } });
      const token = (await stack.api('POST', '/v1/login', { form: { grant_type: 'client_credentials', client_id: client.body.client_id, client_secret: client.body.client_secret } })).body.access_token as string;
      for (const r of [await stack.api('GET', '/v1/settings/auto-topup', { token }), await stack.api('PUT', '/v1/settings/auto-topup', { token, json: { ...settings(), password: 'x' } })]) {
        expect({ role, status: r.status, detail: r.body.detail }).toEqual({ role, status: 403, detail: expect.stringContaining('API clients may not read or change automatic top-up') });
      }
    }
  });
});
