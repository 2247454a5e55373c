import { randomBytes } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatNgn } from '../../src/modules/mail/templates/format.ts';
import { createUser } from '../../src/modules/organisations/index.ts';
import { startStack, type Stack } from '../setup/harness.ts';
import { decodeQuotedPrintable, startSmtpSink, type CapturedMail, type SmtpSink } from '../setup/smtp.ts';
import { until } from '../setup/wait.ts';

// Test queries read loosely typed rows; the service's own queries are the typed ones.
const q = sql.type(z.record(z.string(), z.any()));

let smtp: SmtpSink;
let stack: Stack;
beforeAll(async () => {
  smtp = await startSmtpSink();
  stack = await startStack({ env: { SMTP_URL: smtp.url, MAIL_FROM: 'Billing <billing@idverify.test>' } });
});
afterAll(async () => {
  await stack?.close();
  await smtp?.close();
});


const me = async (token: string) => (await stack.api('GET', '/v1/me', { token })).body.organisation;

/** Buys `units` through the simulator and waits for the webhook's credit and the receipt. */
async function buy(token: string, units: number) {
  const r = await stack.api('POST', '/v1/topup/initialize', { token, form: { units } });
  expect(r.status).toBe(200);
  const before = (await me(token)).units as number;
  const paid = await fetch(`${stack.paymentSim.url}/__sim/transactions/${r.body.reference}/pay`, { method: 'POST' });
  expect(paid.status).toBe(200);
  await until(async () => (await me(token)).units as number, (u) => u > before);
  const mail = await until(
    () => smtp.messages.find((m) => m.raw.includes(r.body.reference)),
    (m) => m !== undefined,
  );
  expect(mail, `receipt for ${r.body.reference}`).toBeDefined();
  return { topup: r.body, mail: mail as CapturedMail, text: decodeQuotedPrintable(mail!.raw) };
}

describe('receipt e-mails', () => {
  it('When a self-hosted tenant is credited, then a receipt with the reference, invoice number, amounts, balance and badge line reaches the billing address and the payer', async () => {
    const org = await stack.createOrg({ tenancy: 'self-hosted', billingEmail: 'accounts@tenant.example', unitCostKobo: 10_000, units: 12 });
    const { topup, mail, text } = await buy(org.admin.token, 100);
    // The billing address, and the administrator who paid.
    expect(mail.to).toEqual(['accounts@tenant.example', org.admin.username]);
    expect(mail.from).toBe('billing@idverify.test');
    expect(text).toContain(`Subject: Payment receipt ${topup.reference}`);
    expect(text).toContain(`Reference: ${topup.reference}`);
    expect(text).toContain('Units bought: 100');
    expect(text).toContain('Bonus units: 0');
    expect(text).toContain(`Base amount: ${formatNgn(topup.base_amount)}`);
    expect(text).toContain('Base amount: NGN 10,000.00');
    expect(text).toContain(`VAT: ${formatNgn(topup.vat_amount)}`);
    // The receipt names the fee as the invoice does, and carries the invoice's number.
    expect(text).toContain(`Processor fee: ${formatNgn(topup.service_charge)}`);
    expect(text).not.toContain('Service charge');
    const invoice = await stack.db.oneFirst(q`SELECT number FROM invoices WHERE topup_reference = ${topup.reference}`);
    expect(text).toContain(`Invoice number: ${invoice}`);
    expect(text).toContain(`Total paid: ${formatNgn(topup.total_amount)}`);
    expect(text).toContain('New balance: 112 units');
    expect(text).toContain('Loyalty badge: none yet');
    expect(text).toContain('There is no per-print charge for verification slips.');

    // The SMTP server has the message a moment before the row is marked sent.
    const row = await until(
      () => stack.db.one(q`SELECT status, attempts::int, sent_at IS NOT NULL AS sent FROM outbox WHERE dedupe_key = ${`receipt-${topup.reference}`}`),
      (r) => r.status === 'sent',
    );
    expect(row).toEqual({ status: 'sent', attempts: 1, sent: true });
  });

  it('When a finance officer pays, then the receipt reaches the billing address and the officer, each once, and no other user', async () => {
    const org = await stack.createOrg({ billingEmail: 'accounts@payer.example' });
    const officer = { username: `fin-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
    await createUser(stack.db, { orgId: org.orgId, ...officer, email: 'officer@payer.example', role: 'finance', requirePasswordChange: false });
    const token = await stack.login(officer.username, officer.password);
    const { mail } = await buy(token, 100);
    expect(mail.to).toEqual(['accounts@payer.example', 'officer@payer.example']);

    // The officer is the billing address too (another case): one copy, to the one address.
    const same = await stack.createOrg({ billingEmail: 'ada@books.example' });
    const keeper = { username: `fin-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
    await createUser(stack.db, { orgId: same.orgId, ...keeper, email: 'ADA@books.example', role: 'finance', requirePasswordChange: false });
    const again = await buy(await stack.login(keeper.username, keeper.password), 100);
    expect(again.mail.to).toEqual(['ada@books.example']);
  });

  it('When a receipt waits in the outbox, then its row holds no address in plain (sealed like every other e-mail), and none once sent', async () => {
    const org = await stack.createOrg({ billingEmail: 'ledger@sealed.example' });
    const officer = { username: `fin-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
    await createUser(stack.db, { orgId: org.orgId, ...officer, email: 'payer@sealed.example', role: 'finance', requirePasswordChange: false });
    const token = await stack.login(officer.username, officer.password);
    const r = await stack.api('POST', '/v1/topup/initialize', { token, form: { units: 100 } });
    expect(r.status).toBe(200);
    const key = `receipt-${r.body.reference}`;
    // The receipt is queued in the credit's transaction; its row is read in whatever state it has by then.
    const paid = await fetch(`${stack.paymentSim.url}/__sim/transactions/${r.body.reference}/pay`, { method: 'POST' });
    expect(paid.status).toBe(200);
    const queued = await until(() => stack.db.maybeOne(q`SELECT status, payload::text AS payload, body_enc IS NOT NULL AS sealed FROM outbox WHERE dedupe_key = ${key}`), (row) => row !== null);
    expect(queued!.payload).not.toMatch(/@sealed\.example/);
    expect(JSON.parse(queued!.payload as string)).not.toHaveProperty('recipients');
    if (queued!.status === 'pending') expect(queued!.sealed).toBe(true);

    const mail = await until(() => smtp.messages.find((m) => m.raw.includes(r.body.reference)), (m) => m !== undefined);
    expect(mail!.to).toEqual(['ledger@sealed.example', 'payer@sealed.example']);
    const sent = await until(() => stack.db.one(q`SELECT status, payload::text AS payload, body_enc IS NULL AS erased FROM outbox WHERE dedupe_key = ${key}`), (row) => row.status === 'sent');
    expect(sent.payload).not.toMatch(/@sealed\.example/);
    expect(sent.erased).toBe(true);
  });

  it('When a hosted tenant is credited, then the receipt goes to the administrators and says nothing of badges', async () => {
    const org = await stack.createOrg({ tenancy: 'hosted' });
    const { mail, text } = await buy(org.admin.token, 200);
    expect(mail.to).toEqual([org.admin.username]);
    expect(text).not.toContain('Loyalty badge');
  });
});

describe('loyalty badges', () => {
  it('When a self-hosted tenant passes 20k, 30k and 50k lifetime units, then /me and the receipts show silver, gold and diamond', async () => {
    const org = await stack.createOrg({ tenancy: 'self-hosted', unitCostKobo: 1 });
    expect((await me(org.admin.token)).loyalty_badge).toBeNull();

    const silver = await buy(org.admin.token, 20_000);
    expect((await me(org.admin.token)).loyalty_badge).toBe('silver');
    expect(silver.text).toContain('Loyalty badge: Silver');

    const gold = await buy(org.admin.token, 10_000);
    expect((await me(org.admin.token)).loyalty_badge).toBe('gold');
    expect(gold.text).toContain('Loyalty badge: Gold');

    const diamond = await buy(org.admin.token, 20_000);
    const after = await me(org.admin.token);
    expect(after.loyalty_badge).toBe('diamond');
    expect(after.lifetime_units).toBe(50_000);
    expect(diamond.text).toContain('Loyalty badge: Diamond');
  });

  it('When a hosted tenant buys 60k units, then it never has a badge', async () => {
    const org = await stack.createOrg({ tenancy: 'hosted', unitCostKobo: 1 });
    await buy(org.admin.token, 60_000);
    const after = await me(org.admin.token);
    expect(after.lifetime_units).toBe(60_000);
    expect(after.loyalty_badge).toBeNull();
  });
});
