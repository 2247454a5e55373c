// The audit chain's cost: the same events written with the chain (one statement that also moves the
// chain head, whose row lock puts concurrent writers in one line) and without it (a plain INSERT into
// an unchained copy of the table), one writer and 16 at once. Needs PostgreSQL (DATABASE_URL's server).
// Usage: node bench/audit-chain.ts [events]
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { sql } from 'slonik';
import { loadConfig } from '../src/config.ts';
import { createDb } from '../src/lib/db.ts';
import { migrate } from '../src/lib/migrate.ts';
import { withinOrigin } from '../src/lib/request-scope.ts';
import { recordAudit } from '../src/modules/audit/index.ts';

const events = Number(process.argv[2] ?? 2000);
const base = loadConfig().DATABASE_URL;
const name = `audit_bench_${randomBytes(3).toString('hex')}`;
const adminUrl = new URL(base);
adminUrl.pathname = '/postgres';
const admin = new pg.Client({ connectionString: adminUrl.toString() });
await admin.connect();
await admin.query(`CREATE DATABASE "${name}"`);
const url = new URL(base);
url.pathname = `/${name}`;
await migrate(url.toString());
const db = await createDb(url.toString(), { maxPoolSize: 16 });
await db.query(sql.unsafe`CREATE TABLE plain_events (LIKE audit_events INCLUDING DEFAULTS)`);

const event = (i: number) => ({ orgId: null, actor: 'system' as const, action: 'verification.requeried' as const, target: `REF-${String(i).padStart(12, '0')}`, requestId: randomBytes(8).toString('hex'), ip: '10.0.0.1' });
let plainId = 0;
const plain = (i: number) => {
  const e = event(i);
  return db.query(sql.unsafe`INSERT INTO plain_events (id, at, actor, action, target, request_id, ip, details, prev_hash, hash)
    VALUES (${++plainId}, now(), ${e.actor}, ${e.action}, ${e.target}, ${e.requestId}, ${e.ip}, '{}', ${sql.binary(Buffer.alloc(32))}, ${sql.binary(Buffer.alloc(32))})`);
};
// The event's request id and address come from the request it is recorded for, as in the API.
const chained = (i: number) => {
  const { requestId, ip, ...e } = event(i);
  return withinOrigin({ requestId, ip }, () => recordAudit(db, e));
};

async function measure(label: string, write: (i: number) => Promise<unknown>, writers: number) {
  const started = process.hrtime.bigint();
  let next = 0;
  await Promise.all(Array.from({ length: writers }, async () => {
    while (next < events) await write(next++);
  }));
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  console.log(JSON.stringify({ label, writers, events, ms: Math.round(ms), per_event_ms: +(ms / events).toFixed(3), per_second: Math.round((events / ms) * 1000) }));
}

for (const writers of [1, 16]) {
  await measure('plain insert', plain, writers);
  await measure('chained insert', chained, writers);
}
await db.end();
await admin.query(`DROP DATABASE "${name}" WITH (FORCE)`);
await admin.end();
