import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLowBalance } from '../../src/modules/alerts/index.ts';
import { setLowBalanceUnits } from '../../src/modules/organisations/low-balance.ts';
import { adjustWallet } from '../../src/modules/wallet/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { decodeQuotedPrintable, startSmtpSink, type SmtpSink } from '../setup/smtp.ts';
import { waitFor } from '../setup/wait.ts';

// Test queries read loosely typed rows; the service's own queries are the typed ones.
const q = sql.type(z.record(z.string(), z.any()));
const run = promisify(execFile);

let smtp: SmtpSink;
let stack: Stack;
beforeAll(async () => {
  smtp = await startSmtpSink();
  stack = await startStack({ env: { SMTP_URL: smtp.url, MAIL_FALLBACK_TO: 'fallback@idverify.test' } });
});
afterAll(async () => {
  await stack?.close();
  await smtp?.close();
});

let nin = 21000000000;
/** One live verification: one unit debited. The answer comes once the lookup job, alert check included, has finished. */
async function debit(org: OrgFixture): Promise<void> {
  const r = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: String(++nin), reason: 'corporate' } });
  expect(r.status).toBe(200);
}

const alerts = (orgId: number) => stack.db.oneFirst(q`SELECT count(*)::int FROM outbox WHERE kind = 'low_balance_email' AND dedupe_key LIKE ${`low-balance-${orgId}-%`}`);
const units = (orgId: number) => stack.db.oneFirst(q`SELECT units::int FROM wallets WHERE org_id = ${orgId}`);
const mailsTo = (address: string) => smtp.messages.filter((m) => m.to.includes(address));

async function orgWithAdminEmail(startUnits: number) {
  const org = await stack.createOrg({ units: startUnits });
  const address = `boss-${org.orgId}@bank.example`;
  await stack.db.query(q`UPDATE users SET email = ${address} WHERE username = ${org.admin.username}`);
  return { org, address };
}

describe('low-balance alerts', () => {
  it('When debits take the balance below the line, then one e-mail reaches the administrators, and another only after the balance was back on the line', async () => {
    const { org, address } = await orgWithAdminEmail(5);
    await setLowBalanceUnits(stack.db, org.orgId, 3);
    await debit(org);
    await debit(org);
    // 3 units: on the line, not below it.
    expect(await units(org.orgId)).toBe(3);
    expect(await alerts(org.orgId)).toBe(0);
    await debit(org);
    expect(await alerts(org.orgId)).toBe(1);
    await debit(org);
    expect(await units(org.orgId)).toBe(1);
    expect(await alerts(org.orgId)).toBe(1);
    const first = (await waitFor(() => mailsTo(address)[0], { what: 'the first alert e-mail' }))!;
    const text = decodeQuotedPrintable(first.raw);
    expect(text).toContain('Subject: Low balance: 2 units left for');
    expect(text).toContain('below the alert line of 3 units');
    // The portal's page, not an API path.
    expect(text).toContain(`${stack.config.publicBaseUrl}/portal/top-up`);
    expect(text).not.toContain('POST /v1/topup/initialize');

    // Back on the line (a credit of 2): armed again, and the next crossing is announced once more.
    await adjustWallet(stack.db, org.orgId, 2, 'top up');
    expect(await stack.db.oneFirst(q`SELECT low_balance_alerted FROM wallets WHERE org_id = ${org.orgId}`)).toBe(false);
    await debit(org);
    expect(await alerts(org.orgId)).toBe(2);
    await debit(org);
    expect(await alerts(org.orgId)).toBe(2);
    await waitFor(() => mailsTo(address).length === 2, { what: 'the second alert e-mail' });
  });

  it('When many debits cross the line at once, then exactly one alert is queued; concurrent checks claim it once', async () => {
    const { org } = await orgWithAdminEmail(12);
    await setLowBalanceUnits(stack.db, org.orgId, 9);
    await Promise.all(Array.from({ length: 6 }, () => debit(org)));
    expect(await units(org.orgId)).toBe(6);
    expect(await alerts(org.orgId)).toBe(1);

    const { org: other } = await orgWithAdminEmail(2);
    await setLowBalanceUnits(stack.db, other.orgId, 5);
    const claimed = await Promise.all(Array.from({ length: 10 }, () => checkLowBalance({ db: stack.db, config: stack.config, logger: stack.workers!.deps.logger }, other.orgId)));
    expect(claimed.filter(Boolean)).toHaveLength(1);
    expect(await alerts(other.orgId)).toBe(1);
  });

  it('When no line is set (the default) or it was turned off, then debits send nothing; without an administrator address the billing address hears of it', async () => {
    const { org } = await orgWithAdminEmail(3);
    await debit(org);
    expect(await alerts(org.orgId)).toBe(0);
    await setLowBalanceUnits(stack.db, org.orgId, 100);
    await setLowBalanceUnits(stack.db, org.orgId, null);
    await debit(org);
    expect(await alerts(org.orgId)).toBe(0);
    await expect(setLowBalanceUnits(stack.db, org.orgId, 0)).rejects.toThrow(/low_balance_units must be an integer from 1/);

    const billing = await stack.createOrg({ units: 2, billingEmail: 'accounts@tenant.example' });
    await stack.db.query(q`UPDATE users SET email = NULL WHERE org_id = ${billing.orgId}`);
    await setLowBalanceUnits(stack.db, billing.orgId, 2);
    await debit(billing);
    expect(await alerts(billing.orgId)).toBe(1);
    await waitFor(() => mailsTo('accounts@tenant.example').length === 1, { what: 'the alert to the billing address' });
  });

  it('When an operator sets the line with org:settings, then it is saved, audited once, and can be turned off', async () => {
    const org = await stack.createOrg();
    const cli = async (...args: string[]) => {
      try {
        const r = await run(process.execPath, ['src/cli/admin.ts', ...args], { env: { ...process.env, DATABASE_URL: stack.config.DATABASE_URL, LOG_LEVEL: 'silent' } });
        return { code: 0, json: JSON.parse(r.stdout.trim()) };
      } catch (err) {
        return { code: (err as { code: number }).code, json: null };
      }
    };
    expect(await cli('org:settings', '--org', String(org.orgId), '--low-balance-units', '50')).toEqual({ code: 0, json: { require_consent: false, require_mfa: false, low_balance_units: 50, address: null, tin: null, face_match_threshold: 75, alert_emails: [], support_contact: null, require_liveness: false } });
    const events = await stack.db.any(q`SELECT actor, target, details FROM audit_events WHERE org_id = ${org.orgId} AND action = 'organisation.settings_changed'`);
    expect(events).toEqual([{ actor: 'operator', target: `org:${org.orgId}`, details: { changed: ['low_balance_units'], low_balance_units: 50 } }]);
    expect(await cli('org:settings', '--org', String(org.orgId), '--low-balance-units', 'off')).toEqual({ code: 0, json: { require_consent: false, require_mfa: false, low_balance_units: null, address: null, tin: null, face_match_threshold: 75, alert_emails: [], support_contact: null, require_liveness: false } });
    expect((await cli('org:settings', '--org', String(org.orgId), '--low-balance-units', '0')).code).toBe(1);
    expect((await cli('org:settings', '--org', String(org.orgId), '--low-balance-units', 'lots')).code).toBe(2);
  });
});
