import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../../src/lib/db.ts';
import { recordAudit, verifyChain } from '../../src/modules/audit/index.ts';
import { canonicalBody, eventHash } from '../../src/modules/audit/canonical.ts';
import { useTestPool } from '../setup/harness.ts';

// Test queries read loosely typed rows; the service's own queries are the typed ones.
const q = sql.type(z.record(z.string(), z.any()));
const run = promisify(execFile);

const pool = useTestPool({ maxPoolSize: 6 });

beforeAll(async () => {
  for (let i = 0; i < 6; i++) {
    await recordAudit(pool.db, { orgId: null, actor: 'operator', action: 'wallet.adjusted', target: `org:${i}`, details: { units: i + 1, nested: { b: 2, a: [1, 'x'] } } });
  }
});

async function auditVerifyCli(): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, ['src/cli/admin.ts', 'audit:verify'], { env: { ...process.env, DATABASE_URL: pool.url, LOG_LEVEL: 'silent' } });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Runs `tamper` as a superuser would: with the table's user triggers off, then on again. */
async function asSuperuser(tamper: (c: DatabasePool) => Promise<unknown>): Promise<void> {
  await pool.db.query(sql.unsafe`ALTER TABLE audit_events DISABLE TRIGGER USER`);
  try {
    await tamper(pool.db);
  } finally {
    await pool.db.query(sql.unsafe`ALTER TABLE audit_events ENABLE TRIGGER USER`);
  }
}

const lastId = async () => Number(await pool.db.oneFirst(q`SELECT last_id FROM audit_chain_head`));

describe('audit chain', () => {
  it('When events are written concurrently (batched by two processes\' pools, and one by one in transactions), then their ids are dense, each follows the one before, and audit:verify exits 0', async () => {
    const before = await lastId();
    // A second pool stands for a second process: the chain head's lock is all they share.
    const other = await createDb(pool.url, { maxPoolSize: 4 });
    try {
      await Promise.all(
        Array.from({ length: 40 }, (_, i) => {
          const e = { orgId: null, actor: 'system' as const, action: 'topup.credited' as const, target: `TOP-${i}`, details: { i } };
          if (i % 4 === 0) return pool.db.transaction((tx) => recordAudit(tx, e));
          return recordAudit(i % 2 === 0 ? other : pool.db, e);
        }),
      );
    } finally {
      await other.end();
    }
    const rows = await pool.db.any(q`SELECT id::int, prev_hash, hash FROM audit_events WHERE id > ${before} ORDER BY id`);
    expect(rows.map((r) => r.id)).toEqual(Array.from({ length: 40 }, (_, i) => before + i + 1));
    for (let i = 1; i < rows.length; i++) expect(Buffer.compare(rows[i]!.prev_hash, rows[i - 1]!.hash), `event ${rows[i]!.id}`).toBe(0);
    expect(await verifyChain(pool.db)).toMatchObject({ ok: true, events: before + 40, head_id: before + 40 });
    const cli = await auditVerifyCli();
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ ok: true, events: before + 40 });
  });

  it('When one event of a batch breaks a rule, then only its own caller hears of it and the others are written', async () => {
    const before = await lastId();
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => recordAudit(pool.db, { orgId: null, actor: 'operator', action: 'wallet.adjusted', target: i === 5 ? 'x'.repeat(300) : `org:${i}` })),
    );
    expect(results.map((r) => r.status)).toEqual(Array.from({ length: 10 }, (_, i) => (i === 5 ? 'rejected' : 'fulfilled')));
    expect(await lastId()).toBe(before + 9);
    expect((await verifyChain(pool.db)).ok).toBe(true);
  });

  it('When the service (or anyone) updates, deletes or truncates events, then the database refuses', async () => {
    await expect(pool.db.query(sql.unsafe`UPDATE audit_events SET actor = 'system' WHERE id = 1`)).rejects.toThrow(/audit_events is append-only/);
    await expect(pool.db.query(sql.unsafe`DELETE FROM audit_events WHERE id = 1`)).rejects.toThrow(/audit_events is append-only/);
    await expect(pool.db.query(sql.unsafe`TRUNCATE audit_events`)).rejects.toThrow(/audit_events is append-only/);
    await expect(pool.db.query(sql.unsafe`UPDATE audit_chain_head SET last_id = 1`)).rejects.toThrow(/only moves forward/);
    await expect(pool.db.query(sql.unsafe`DELETE FROM audit_chain_head`)).rejects.toThrow(/only moves forward/);
    expect((await verifyChain(pool.db)).ok).toBe(true);
  });

  it('When a superuser edits an event, then audit:verify names that event and exits 1; put back, the chain holds again', async () => {
    const original = await pool.db.one(q`SELECT details FROM audit_events WHERE id = 3`);
    await asSuperuser((c) => c.query(sql.unsafe`UPDATE audit_events SET details = ${sql.jsonb({ ...original.details, units: 999 })} WHERE id = 3`));
    expect(await verifyChain(pool.db)).toMatchObject({ ok: false, broken_at: 3, after: 2, reason: 'event 3 was altered (its hash does not match its contents)' });
    const cli = await auditVerifyCli();
    expect(cli.code).toBe(1);
    expect(JSON.parse(cli.stderr.trim().split('\n')[0]!)).toEqual({ detail: 'audit chain broken at event 3: event 3 was altered (its hash does not match its contents)' });
    await asSuperuser((c) => c.query(sql.unsafe`UPDATE audit_events SET details = ${sql.jsonb(original.details)} WHERE id = 3`));
    expect((await verifyChain(pool.db)).ok).toBe(true);
  });

  it('When a superuser deletes an event in the middle or at the end, then audit:verify finds the gap', async () => {
    const saved = await pool.db.one(q`SELECT * FROM audit_events WHERE id = 4`);
    const restore = (row: Record<string, any>) =>
      sql.unsafe`INSERT INTO audit_events (id, at, org_id, actor, action, target, request_id, ip, details, prev_hash, hash)
        VALUES (${row.id}, ${sql.timestamp(new Date(row.at))}, ${row.org_id}, ${row.actor}, ${row.action}, ${row.target}, ${row.request_id}, ${row.ip},
                ${sql.jsonb(row.details)}, ${sql.binary(row.prev_hash)}, ${sql.binary(row.hash)})`;
    await asSuperuser((c) => c.query(sql.unsafe`DELETE FROM audit_events WHERE id = 4`));
    expect(await verifyChain(pool.db)).toMatchObject({ ok: false, broken_at: 5, reason: 'event 4 is missing (the next event is 5)' });
    await asSuperuser((c) => c.query(restore(saved)));
    expect((await verifyChain(pool.db)).ok).toBe(true);

    const last = await lastId();
    const tail = await pool.db.one(q`SELECT * FROM audit_events WHERE id = ${last}`);
    await asSuperuser((c) => c.query(sql.unsafe`DELETE FROM audit_events WHERE id = ${last}`));
    expect(await verifyChain(pool.db)).toMatchObject({ ok: false, broken_at: last, reason: `the chain ends at event ${last - 1} but its head records event ${last}` });
    await asSuperuser((c) => c.query(restore(tail)));
    expect((await verifyChain(pool.db)).ok).toBe(true);
  });

  it('When a superuser inserts an event, even one hashed by the published rule, then audit:verify names it', async () => {
    const last = await lastId();
    const prev = await pool.db.one(q`SELECT hash FROM audit_events WHERE id = ${last}`);
    const forged = { at: new Date(), orgId: null, actor: 'operator', action: 'wallet.adjusted', target: 'org:1', requestId: null, ip: null, details: { units: 1000 } };
    const hash = eventHash(prev.hash, last + 1, canonicalBody(forged));
    await asSuperuser((c) =>
      c.query(sql.unsafe`INSERT INTO audit_events (id, at, actor, action, target, details, prev_hash, hash)
        VALUES (${last + 1}, ${sql.timestamp(forged.at)}, 'operator', 'wallet.adjusted', 'org:1', ${sql.jsonb(forged.details)}, ${sql.binary(prev.hash)}, ${sql.binary(hash)})`),
    );
    expect(await verifyChain(pool.db)).toMatchObject({ ok: false, broken_at: last + 1, reason: `event ${last + 1} is not part of the chain (its head ends at event ${last})` });

    await asSuperuser((c) => c.query(sql.unsafe`DELETE FROM audit_events WHERE id = ${last + 1}`));
    expect((await verifyChain(pool.db)).ok).toBe(true);
  });
});
