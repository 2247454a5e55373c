// subject:export and subject:erase see a person's batch rows that still wait (a
// paused batch, rows not yet queued for the authority). Export lists them; erase cancels them, so
// their lookups never happen and nothing about the person is stored once the wallet is funded.
import { createHmac } from 'node:crypto';
import { execFile } from 'node:child_process';
import pg from 'pg';
import { promisify } from 'node:util';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { until, waitFor } from '../setup/wait.ts';

const q = sql.type(z.record(z.string(), z.any()));
const run = promisify(execFile);

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack?.close());

async function admin(...args: string[]): Promise<{ code: number; json: any; stderr: string }> {
  const env = { ...process.env, DATABASE_URL: stack.config.DATABASE_URL, SUBJECT_HASH_KEY: stack.config.SUBJECT_HASH_KEY, LOG_LEVEL: 'silent' };
  try {
    const r = await run(process.execPath, ['src/cli/admin.ts', ...args], { env });
    return { code: 0, json: JSON.parse(r.stdout.trim().split('\n').at(-1)!), stderr: '' };
  } catch (err) {
    const e = err as { code: number; stderr: string };
    const line = e.stderr.trim().split('\n')[0] ?? '';
    return { code: e.code, json: line.startsWith('{') ? JSON.parse(line) : null, stderr: e.stderr };
  }
}

const getBatch = (org: OrgFixture, id: string) => stack.api('GET', `/v1/verify-nin/batches/${id}`, { token: org.admin.token });
const hashOf = (nin: string) => createHmac('sha256', stack.config.SUBJECT_HASH_KEY).update(nin).digest();

async function topUp(org: OrgFixture, units: number) {
  const t = await stack.api('POST', '/v1/topup/initialize', { token: org.admin.token, form: { units } });
  expect(t.status).toBe(200);
  const paid = await fetch(`${stack.paymentSim.url}/__sim/transactions/${t.body.reference}/pay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(paid.status).toBe(200);
}

describe('data-subject requests and waiting batch rows', () => {
  it('When a paused batch holds rows of a person, then subject:export lists them and subject:erase cancels them, and after the wallet is funded nothing about the person is stored', async () => {
    const org = await stack.createOrg({ units: 0 });
    const person = '29010000001';
    const other = '29010000002';
    const created = await stack.api('POST', '/v1/verify-nin/batches', {
      token: org.admin.token,
      json: { reason: 'corporate', rows: [{ nin: person, client_ref: 'p-1' }, { nin: other, client_ref: 'o-1' }, { nin: person, client_ref: 'p-2' }] },
    });
    expect(created.status).toBe(202);
    const id = created.body.id as string;
    const paused = await until(async () => (await getBatch(org, id)).body, (b) => b.status === 'paused', 60_000);
    expect(paused).toMatchObject({ status: 'paused', paused_reason: 'insufficient_units', done: 0 });

    const exported = await admin('subject:export', '--nin', person);
    expect(exported.code).toBe(0);
    expect(exported.json).toEqual({
      verifications: [],
      waiting_batch_rows: [
        { org_id: org.orgId, batch_id: id, row: 1, state: 'waiting', batch_status: 'paused' },
        { org_id: org.orgId, batch_id: id, row: 3, state: 'waiting', batch_status: 'paused' },
      ],
    });
    // Scoped to another organisation, the rows are not listed.
    const elsewhere = await stack.createOrg({ units: 0 });
    expect((await admin('subject:export', '--nin', person, '--org', String(elsewhere.orgId))).json).toEqual({ verifications: [], waiting_batch_rows: [] });

    const events = () => stack.db.any(q`SELECT org_id::int, details FROM audit_events WHERE action = 'subject.erased' ORDER BY id`);
    const before = (await events()).length;
    const erased = await admin('subject:erase', '--nin', person, '--confirm');
    expect(erased).toMatchObject({ code: 0, json: { erased: 0, batch_rows_cancelled: 2, organisations: [org.orgId] } });
    expect((await events()).slice(before)).toEqual([{ org_id: org.orgId, details: { verifications: 0, batch_rows: 2 } }]);

    // The batch's counts say cancelled; the other person's row still waits for units.
    expect((await getBatch(org, id)).body).toMatchObject({ status: 'paused', cancelled: 2, done: 2 });
    expect((await admin('subject:export', '--nin', person)).json).toEqual({ verifications: [], waiting_batch_rows: [] });

    await topUp(org, 100);
    const done = await until(async () => (await getBatch(org, id)).body, (b) => b.status === 'completed', 60_000);
    expect(done).toMatchObject({ status: 'completed', found: 1, cancelled: 2, units_charged: 1 });
    // Only the other person was looked up: no verification, record or query of the erased person.
    const rows = await stack.db.any(q`SELECT subject_hash FROM verifications WHERE org_id = ${org.orgId}`);
    expect(rows).toHaveLength(1);
    expect((rows[0]!.subject_hash as Buffer).equals(hashOf(other))).toBe(true);
    expect(await stack.db.oneFirst(q`SELECT count(*)::int FROM batch_lookups WHERE batch_id = ${id} AND (query_enc IS NOT NULL OR subject_hash IS NOT NULL)`)).toBe(0);
    const results = await stack.api('GET', `/v1/verify-nin/batches/${id}/results`, { token: org.admin.token, headers: { accept: 'application/json' } });
    expect(results.status).toBe(200);
    expect(results.body.data.map((r: any) => [r.row, r.status, r.detail])).toEqual([
      [1, 'cancelled', "cancelled before this row was looked up: the person's data was erased on their request"],
      [2, 'found', null],
      [3, 'cancelled', "cancelled before this row was looked up: the person's data was erased on their request"],
    ]);
  }, 240_000);

  it('When a waiting row was stored before rows kept a subject hash, then the subject commands still find it by its sealed NIN', async () => {
    const org = await stack.createOrg({ units: 0 });
    const person = '29010000011';
    const created = await stack.api('POST', '/v1/verify-nin/batches', { token: org.admin.token, json: { reason: 'corporate', rows: [{ nin: person }] } });
    expect(created.status).toBe(202);
    const id = created.body.id as string;
    await until(async () => (await getBatch(org, id)).body, (b) => b.status === 'paused', 60_000);
    // As a row written before the column existed (or by an older process during a release).
    await stack.db.query(sql.unsafe`UPDATE batch_lookups SET subject_hash = NULL WHERE batch_id = ${id}`);

    const erased = await admin('subject:erase', '--nin', person, '--confirm');
    expect(erased).toMatchObject({ code: 0, json: { erased: 0, batch_rows_cancelled: 1, organisations: [org.orgId] } });
    // Its last row ended: the batch has ended too.
    expect((await getBatch(org, id)).body).toMatchObject({ status: 'completed', cancelled: 1 });
  }, 240_000);

  it('When the feeder is queueing a row of the person as the erasure starts, then the erasure waits for it, refuses naming the lookup in progress, and erases it once settled', async () => {
    const org = await stack.createOrg({ units: 5 });
    const person = '29010000021';
    // The authority is down: a queued row's lookup waits it out, pending, for as long as this test needs.
    stack.identitySim.outage({ mode: '503', forMs: 600_000 });
    // The test holds the wallet row: the feeder, once it has taken its batch's lock and read the row,
    // waits at the row's hold, in the middle of queueing it.
    const locker = new pg.Client({ connectionString: stack.config.DATABASE_URL });
    await locker.connect();
    const waitingOn = (event: string) => stack.db.oneFirst(q`SELECT count(*)::int FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = ${event}`);
    let erasing: Promise<Awaited<ReturnType<typeof admin>>>;
    let id: string;
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM wallets WHERE org_id = $1 FOR UPDATE', [org.orgId]);
      const created = await stack.api('POST', '/v1/verify-nin/batches', { token: org.admin.token, json: { reason: 'corporate', rows: [{ nin: person }] } });
      expect(created.status).toBe(202);
      id = created.body.id as string;
      await waitFor(async () => (await waitingOn('transactionid')) >= 1, { what: 'the feeder to wait at the hold of the row', timeoutMs: 60_000 });
      erasing = admin('subject:erase', '--nin', person, '--confirm');
      // The erasure waits for the feed's lock.
      await waitFor(async () => (await waitingOn('advisory')) >= 1, { what: 'the erasure to wait for the feed', timeoutMs: 120_000 });
    } finally {
      await locker.query('COMMIT').catch(() => undefined);
      await locker.end();
    }
    const refused = await erasing!;
    expect(refused.code).toBe(1);
    expect(refused.json.detail).toMatch(new RegExp(`^a verification of this person is still in progress \\(REF-[A-Z0-9]{12} \\(batch ${id!}\\)\\); nothing was erased`));

    stack.identitySim.outage({ mode: 'none' });
    await until(async () => (await getBatch(org, id!)).body, (b) => b.status === 'completed', 120_000);
    const erased = await admin('subject:erase', '--nin', person, '--confirm');
    expect(erased).toMatchObject({ code: 0, json: { erased: 1, batch_rows_cancelled: 0, organisations: [org.orgId] } });
    const v = await stack.db.one(q`SELECT status, record_enc, query_enc, subject_hash FROM verifications WHERE batch_id = ${id!}`);
    expect(v).toEqual({ status: 'expired', record_enc: null, query_enc: null, subject_hash: null });
  }, 360_000);
});
