import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newResetToken } from '../../src/modules/accounts/reset-token.ts';
import { insertResetWithinCap } from '../../src/modules/accounts/resets.repository.ts';
import { verifyChain } from '../../src/modules/audit/index.ts';
import { adjustWallet } from '../../src/modules/wallet/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

// Test queries read loosely typed rows; the service's own queries are the typed ones.
const q = sql.type(z.record(z.string(), z.any()));

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack?.close());

const count = async (orgId: number | null, action: string) =>
  Number(await stack.db.oneFirst(q`SELECT count(*)::int FROM audit_events WHERE org_id IS NOT DISTINCT FROM ${orgId} AND action = ${action}`));
const newest = (action: string) => stack.db.one(q`SELECT id::int, org_id::int, actor, action, target, request_id, ip, details FROM audit_events WHERE action = ${action} ORDER BY id DESC LIMIT 1`);

/** Runs `act` and expects exactly one more `action` event for the organisation; returns that event. */
async function oneEvent(orgId: number | null, action: string, act: () => Promise<unknown>) {
  const before = await count(orgId, action);
  await act();
  expect(await count(orgId, action), action).toBe(before + 1);
  return newest(action);
}

const userId = async (token: string) => (await stack.api('GET', '/v1/me', { token })).body.id as number;
const LOCAL = /^(::ffff:)?127\.0\.0\.1$/;

describe('audited actions', () => {
  let org: OrgFixture;
  let adminId: number;
  beforeAll(async () => {
    org = await stack.createOrg({ units: 20 });
    adminId = await userId(org.admin.token);
  });

  it('When an administrator signs in, fails to, signs out and changes a password, then each leaves one event with who, what, request id and address', async () => {
    const signIn = await oneEvent(org.orgId, 'auth.login', () =>
      stack.api('POST', '/v1/login', { form: { username: org.admin.username, password: org.admin.password }, headers: { 'X-Request-Id': 'audit-signin-0001' } }),
    );
    expect(signIn).toMatchObject({ actor: `user:${adminId}`, target: `user:${adminId}`, request_id: 'audit-signin-0001', details: { method: 'password' } });
    expect(signIn.ip).toMatch(LOCAL);

    const failed = await oneEvent(org.orgId, 'auth.login_failed', () => stack.api('POST', '/v1/login', { form: { username: org.admin.username, password: 'wrong-password' } }));
    expect(failed).toMatchObject({ actor: 'anonymous', target: `user:${adminId}`, details: { method: 'password', known_account: true } });
    // An unknown name is filed under no organisation, and the name itself is kept nowhere.
    const unknown = await oneEvent(null, 'auth.login_failed', () => stack.api('POST', '/v1/login', { form: { username: 'nobody-here@example.com', password: 'whatever-password' } }));
    expect(unknown).toMatchObject({ org_id: null, target: null, details: { method: 'password', known_account: false } });
    expect(JSON.stringify(unknown)).not.toContain('nobody-here');

    const memberId = await userId(org.member.token);
    const out = await oneEvent(org.orgId, 'auth.logout', () => stack.api('POST', '/v1/logout', { token: org.member.token }));
    expect(out).toMatchObject({ actor: `user:${memberId}`, target: `user:${memberId}` });

    const token = await stack.login(org.admin.username, org.admin.password);
    const changed = await oneEvent(org.orgId, 'account.password_changed', async () => {
      const r = await stack.api('POST', '/v1/change-password', { token, json: { current_password: org.admin.password, new_password: 'a-much-longer-passphrase-42' } });
      expect(r.status).toBe(200);
    });
    expect(changed).toMatchObject({ actor: `user:${adminId}`, target: `user:${adminId}` });

    const { token: resetToken, digest } = newResetToken();
    await stack.db.transaction((tx) => insertResetWithinCap(tx, { userId: adminId, tokenHash: digest, now: new Date(), expiresAt: new Date(Date.now() + 600_000), since: new Date(0), max: 1000 }));
    const reset = await oneEvent(org.orgId, 'account.password_reset', async () => {
      const r = await stack.api('POST', '/v1/reset-password', { json: { token: resetToken, new_password: 'another-long-passphrase-43' } });
      expect(r.status).toBe(200);
    });
    expect(reset).toMatchObject({ actor: `user:${adminId}`, target: `user:${adminId}` });
    org.admin.password = 'another-long-passphrase-43';
    org.admin.token = await stack.login(org.admin.username, org.admin.password);
  });

  it('When the team and API clients change, then each change leaves one event naming its target by id', async () => {
    let created: any;
    // Users are made by invitation (its own events) or by the operator's user:create, which records this one.
    const userCreated = await oneEvent(org.orgId, 'team.user_created', async () => {
      const args = ['src/cli/admin.ts', 'user:create', '--org', String(org.orgId), '--username', `clerk-${org.orgId}`, '--password', 'a-long-passphrase', '--role', 'member', '--email', 'clerk@example.com'];
      const r = await promisify(execFile)(process.execPath, args, { env: { ...process.env, DATABASE_URL: stack.config.DATABASE_URL, LOG_LEVEL: 'silent' } });
      created = JSON.parse(r.stdout.trim());
    });
    expect(userCreated).toMatchObject({ actor: 'operator', target: `user:${created.id}`, details: { role: 'member', by: 'user:create' } });
    expect(JSON.stringify(userCreated)).not.toContain('clerk@example.com');
    const updated = await oneEvent(org.orgId, 'team.user_updated', () => stack.api('PATCH', `/v1/team/${created.id}`, { token: org.admin.token, json: { disabled: true } }));
    expect(updated).toMatchObject({ target: `user:${created.id}`, details: { changed: ['disabled'], disabled: true, role: 'member' } });

    let client: any;
    const clientCreated = await oneEvent(org.orgId, 'api_client.created', async () => {
      client = (await stack.api('POST', '/v1/api-clients', { token: org.admin.token, json: { name: 'core banking', role: 'member' } })).body;
    });
    expect(clientCreated).toMatchObject({ actor: `user:${adminId}`, target: `client:${client.client_id}`, details: { role: 'member' } });
    const grant = await oneEvent(org.orgId, 'auth.login', () =>
      stack.api('POST', '/v1/login', { form: { grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret } }),
    );
    expect(grant).toMatchObject({ actor: `client:${client.client_id}`, details: { method: 'client_credentials' } });
    const refused = await oneEvent(org.orgId, 'auth.login_failed', () =>
      stack.api('POST', '/v1/login', { form: { grant_type: 'client_credentials', client_id: client.client_id, client_secret: 'not-the-secret' } }),
    );
    expect(refused).toMatchObject({ actor: 'anonymous', target: `client:${client.client_id}`, details: { method: 'client_credentials', known_account: true } });
    const revoked = await oneEvent(org.orgId, 'api_client.revoked', () => stack.api('DELETE', `/v1/api-clients/${client.client_id}`, { token: org.admin.token }));
    expect(revoked).toMatchObject({ actor: `user:${adminId}`, target: `client:${client.client_id}` });
  });

  it('When units move (an adjustment, a top-up credit), then each movement leaves one event', async () => {
    const adjusted = await oneEvent(org.orgId, 'wallet.adjusted', () => adjustWallet(stack.db, org.orgId, 7, 'goodwill'));
    expect(adjusted).toMatchObject({ actor: 'operator', target: `org:${org.orgId}`, details: { units: 7 } });
    expect(JSON.stringify(adjusted)).not.toContain('goodwill');

    const init = await stack.api('POST', '/v1/topup/initialize', { token: org.admin.token, form: { units: 100 } });
    expect(init.status).toBe(200);
    const credited = await oneEvent(org.orgId, 'topup.credited', async () => {
      expect((await fetch(`${stack.paymentSim.url}/__sim/transactions/${init.body.reference}/pay`, { method: 'POST' })).status).toBe(200);
      await waitFor(async () => (await stack.db.oneFirst(q`SELECT status FROM topups WHERE reference = ${init.body.reference}`)) === 'credited', { what: 'top-up credited' });
    });
    expect(credited).toMatchObject({ actor: 'system', target: init.body.reference, details: { units: 100, bonus_units: 0 } });
  });

  it('When a stored record is read again (requery, slip), then each read leaves one event; a read that returns no record leaves none', async () => {
    // Another test of this group signs the member out.
    org.member.token = await stack.login(org.member.username, org.member.password);
    const v = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '12345678901', reason: 'corporate' } });
    expect(v.status).toBe(200);
    const ref = v.body.data.reference_id as string;
    const memberId = await userId(org.member.token);
    const requeried = await oneEvent(org.orgId, 'verification.requeried', () => stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } }));
    expect(requeried).toMatchObject({ actor: `user:${memberId}`, target: ref });
    const slip = await oneEvent(org.orgId, 'verification.slip_printed', async () => {
      expect((await stack.api('GET', `/v1/verify-nin/slip/${ref}`, { token: org.member.token })).status).toBe(200);
    });
    expect(slip).toMatchObject({ actor: `user:${memberId}`, target: ref });

    const before = await count(org.orgId, 'verification.requeried');
    const notFound = await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '99999999999', reason: 'corporate' } });
    const r = await stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: notFound.body.reference_id ?? 'REF-AAAAAAAAAAAA' } });
    expect(r.status).toBe(404);
    expect(await count(org.orgId, 'verification.requeried')).toBe(before);
    expect((await verifyChain(stack.db)).ok).toBe(true);
  });
});

describe('GET /audit-events', () => {
  it("When an administrator lists the trail, then only the organisation's own events come back, newest first, page by page, in the published shape", async () => {
    const org = await stack.createOrg();
    const other = await stack.createOrg();
    for (let i = 0; i < 3; i++) await stack.login(org.admin.username, org.admin.password);
    const expected = (await stack.db.any(q`SELECT id::int FROM audit_events WHERE org_id = ${org.orgId} ORDER BY id DESC`)).map((r) => r.id);
    expect(expected.length).toBeGreaterThanOrEqual(5);

    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await stack.api('GET', `/v1/audit-events?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token: org.admin.token });
      expect(page.status).toBe(200);
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.data.map((e: any) => e.id));
      for (const e of page.body.data) {
        expect(Object.keys(e)).toEqual(['id', 'at', 'org_id', 'actor', 'action', 'target', 'request_id', 'ip', 'details', 'hash']);
        expect(e.org_id).toBe(org.orgId);
        expect(e.hash).toMatch(/^[0-9a-f]{64}$/);
      }
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(expected);

    const logins = await stack.api('GET', '/v1/audit-events?action=auth.login', { token: org.admin.token });
    expect(logins.body.data.length).toBe(5);
    expect(new Set(logins.body.data.map((e: any) => e.action))).toEqual(new Set(['auth.login']));
    const theirs = await stack.api('GET', '/v1/audit-events', { token: other.admin.token });
    expect(theirs.body.data.every((e: any) => e.org_id === other.orgId)).toBe(true);
    expect(theirs.body.data.some((e: any) => seen.includes(e.id))).toBe(false);
  });

  it('When filtered by day, then from/to are Lagos days; a bad filter is 400; a member is refused', async () => {
    const org = await stack.createOrg();
    const lagosToday = new Date(Date.now() + 3600_000).toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 3600_000 + 86_400_000).toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() + 3600_000 - 86_400_000).toISOString().slice(0, 10);
    expect((await stack.api('GET', `/v1/audit-events?from=${lagosToday}&to=${lagosToday}`, { token: org.admin.token })).body.data.length).toBe(2);
    expect((await stack.api('GET', `/v1/audit-events?from=${tomorrow}`, { token: org.admin.token })).body.data).toEqual([]);
    expect((await stack.api('GET', `/v1/audit-events?to=${yesterday}`, { token: org.admin.token })).body.data).toEqual([]);
    const bad = await stack.api('GET', '/v1/audit-events?action=auth.sneeze', { token: org.admin.token });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/^action: action must be one of auth.login, /);
    expect((await stack.api('GET', `/v1/audit-events?from=${tomorrow}&to=${yesterday}`, { token: org.admin.token })).status).toBe(400);
    expect((await stack.api('GET', '/v1/audit-events?cursor=bm9wZQ', { token: org.admin.token })).status).toBe(400);
    // JSON pages judge every parameter; CSV (no pages) its filters, before anything is sent.
    const cases = [['limit=abc', 422, 'application/json'], ['limit=500', 400, 'application/json'], ['cursor=' + 'A'.repeat(500), 400, 'application/json'], ['from=2026-02-30', 400, 'text/csv'], ['action=auth.login&action=auth.logout', 400, 'text/csv']] as const;
    for (const [query, status, accept] of cases) {
      const r = await stack.api('GET', `/v1/audit-events?${query}`, { token: org.admin.token, headers: { accept } });
      expect(r.status, query).toBe(status);
      expect(typeof r.body.detail, query).toBe('string');
    }
    const member = await stack.api('GET', '/v1/audit-events', { token: org.member.token });
    expect(member.status).toBe(403);
    expect((await stack.api('GET', '/v1/audit-events')).status).toBe(401);
  });

  it('When Accept allows neither JSON nor CSV, then 406 as on the other lists; */* and no Accept stay JSON', async () => {
    const org = await stack.createOrg();
    const r = await stack.api('GET', '/v1/audit-events', { token: org.admin.token, headers: { accept: 'application/xml' } });
    expect(r.status).toBe(406);
    expect(r.body).toEqual({ detail: 'Accept must allow application/json or text/csv' });
    for (const accept of ['*/*', 'application/json', 'text/*;q=0.1, application/json']) {
      const ok = await stack.api('GET', '/v1/audit-events', { token: org.admin.token, headers: { accept } });
      expect(ok.status, accept).toBe(200);
      expect(ok.headers.get('content-type')).toBe('application/json; charset=utf-8');
    }
    expect((await stack.api('GET', '/v1/audit-events', { token: org.admin.token })).status).toBe(200);
  });

  it('When filtered by instants with a zone, then from/to are exact and inclusive to the millisecond, as an event shows its at', async () => {
    const org = await stack.createOrg();
    for (let i = 0; i < 2; i++) await stack.login(org.admin.username, org.admin.password);
    const all = (await stack.api('GET', '/v1/audit-events', { token: org.admin.token })).body.data as { id: number; at: string }[];
    expect(all.length).toBeGreaterThanOrEqual(3);
    const [newest, , oldest] = all;
    const ids = async (query: string) => {
      const r = await stack.api('GET', `/v1/audit-events?${query}`, { token: org.admin.token });
      expect(r.status, query).toBe(200);
      return r.body.data.map((e: { id: number }) => e.id);
    };
    expect(await ids(`from=${oldest!.at}&to=${newest!.at}`)).toEqual(all.filter((e) => e.at >= oldest!.at && e.at <= newest!.at).map((e) => e.id));
    expect(await ids(`to=${oldest!.at}`)).toEqual(all.filter((e) => e.at <= oldest!.at).map((e) => e.id));
    expect(await ids('to=2030-01-01T00:00:00Z')).toEqual(all.map((e) => e.id));
    expect(await ids(`from=${encodeURIComponent('2030-01-01T00:00:00+01:00')}`)).toEqual([]);
    const bad = await stack.api('GET', '/v1/audit-events?to=2030-01-01T00:00:00', { token: org.admin.token });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ detail: 'to: to must be a date YYYY-MM-DD or a date-time with a zone, e.g. 2026-03-01T09:30:00Z' });
  });

  it('When CSV is asked for, then the whole filtered trail comes as CSV with a header row', async () => {
    const org = await stack.createOrg();
    await stack.login(org.admin.username, org.admin.password);
    const res = await fetch(`${stack.url}/v1/audit-events?action=auth.login`, { headers: { authorization: `Bearer ${org.admin.token}`, accept: 'text/csv' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = (await res.text()).split('\r\n');
    expect(lines[0]).toBe('id,at,org_id,actor,action,target,request_id,ip,details,hash');
    expect(lines.at(-1)).toBe('');
    const rows = lines.slice(1, -1);
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row).toMatch(new RegExp(`^\\d+,\\d{4}-\\d\\d-\\d\\dT[^,]+,${org.orgId},user:\\d+,auth\\.login,user:\\d+,[^,]+,[^,]+,"{""method"":""password""}",[0-9a-f]{64}$`));
  });
});
