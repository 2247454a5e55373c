import { randomBytes } from 'node:crypto';
import express from 'express';
import jwt from 'jsonwebtoken';
import pg from 'pg';
import { fixtureOutcome } from '../src/modules/verification/fixtures.ts';
import type { PersonRecord } from '../src/modules/verification/person.ts';

/**
 * The yardstick for scenarios 1 and 2: the least an express handler can do for POST /v1/verify-nin
 * with no queue. It checks the same HS256 bearer token, validates the body, (live mode) makes the
 * same upstream call to the identity simulator, then debits the wallet and inserts the ledger line in
 * ONE SQL transaction on the same kind of wallet row (one organisation: the hot row), and answers.
 * No rate limiter, no principal lookup, no encryption, no verification row, no logging.
 *
 * Env: PORT, DATABASE_URL, JWT_SECRET, JWT_ISSUER, BASELINE_MODE (fixture | live),
 * IDENTITY_URL, IDENTITY_API_KEY, DATABASE_POOL_SIZE.
 *
 * BASELINE_PATTERN turns it into an experiment on the wallet row (scenario 2's diagnostics):
 * - `debit` (default): the one transaction above, after the upstream call;
 * - `reserve-capture-tx`: the service's pattern without the queue: a transaction that reserves a
 *   unit before the upstream call, another that captures it after (the row locked twice, each time
 *   until the client sends COMMIT);
 * - `reserve-capture-stmt`: the same two steps, each as ONE autocommit statement (no client round
 *   trip while the row is locked).
 */
const env = process.env;
const mode = env.BASELINE_MODE === 'live' ? 'live' : 'fixture';
const pattern = env.BASELINE_PATTERN ?? 'debit';
const secret = env.JWT_SECRET ?? '';
const issuer = env.JWT_ISSUER ?? 'idverify';
const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: Number(env.DATABASE_POOL_SIZE ?? 20) });
const identityUrl = `${(env.IDENTITY_URL ?? '').replace(/\/$/, '')}/v1/nin`;
const identityHeaders = { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${env.IDENTITY_API_KEY ?? ''}` };

// The same sample record the service answers for 12345678901 (so both sides serialise the same bytes).
const FIXTURE = (fixtureOutcome('12345678901') as { kind: 'found'; record: PersonRecord }).record;

async function debit(orgId: number, reference: string): Promise<boolean> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const moved = await client.query<{ units: string }>('UPDATE wallets SET units = units - 1 WHERE org_id = $1 AND units - reserved >= 1 RETURNING units', [orgId]);
    const row = moved.rows[0];
    if (!row) {
      await client.query('ROLLBACK');
      return false;
    }
    const after = Number(row.units);
    await client.query(
      `INSERT INTO wallet_transactions (org_id, kind, amount, units_delta, units_before, units_after, details, reference)
       VALUES ($1, 'verification', 10000, -1, $2, $3, '{}', $4)`,
      [orgId, after + 1, after, reference],
    );
    await client.query('COMMIT');
    return true;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

async function inTransaction<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

const RESERVE = 'UPDATE wallets SET reserved = reserved + 1 WHERE org_id = $1 AND units - reserved >= 1';
const CAPTURE = `WITH w AS (UPDATE wallets SET units = units - 1, reserved = reserved - 1 WHERE org_id = $1 RETURNING units)
  INSERT INTO wallet_transactions (org_id, kind, amount, units_delta, units_before, units_after, details, reference)
  SELECT $1, 'verification', 10000, -1, w.units + 1, w.units, '{}', $2 FROM w`;

async function reserve(orgId: number): Promise<boolean> {
  if (pattern === 'reserve-capture-stmt') return (await pool.query(RESERVE, [orgId])).rowCount === 1;
  // A first statement before the wallet, as the service inserts its verification row first.
  return inTransaction(async (c) => {
    await c.query('SELECT 1');
    return (await c.query(RESERVE, [orgId])).rowCount === 1;
  });
}

async function capture(orgId: number, reference: string): Promise<void> {
  if (pattern === 'reserve-capture-stmt') {
    await pool.query(CAPTURE, [orgId, reference]);
    return;
  }
  await inTransaction(async (c) => {
    await c.query('SELECT 1');
    await c.query(CAPTURE, [orgId, reference]);
  });
}

const app = express();
app.disable('x-powered-by');
app.disable('etag');
app.post('/v1/verify-nin', express.json({ limit: '16kb' }), async (req, res) => {
  let orgId: number;
  try {
    const claims = jwt.verify((req.get('authorization') ?? '').replace(/^Bearer /, ''), secret, { algorithms: ['HS256'], issuer }) as { org?: number };
    if (typeof claims.org !== 'number') throw new Error('no org');
    orgId = claims.org;
  } catch {
    res.status(401).json({ detail: 'Could not validate credentials' });
    return;
  }
  const { nin, reason } = (req.body ?? {}) as { nin?: unknown; reason?: unknown };
  if (typeof nin !== 'string' || !/^\d{11}$/.test(nin) || typeof reason !== 'string') {
    res.status(400).json({ detail: 'Invalid request' });
    return;
  }
  try {
    const reserving = pattern !== 'debit';
    if (reserving && !(await reserve(orgId))) {
      res.status(402).json({ detail: 'Insufficient units in organisation wallet' });
      return;
    }
    let record: unknown = FIXTURE;
    if (mode === 'live') {
      const up = await fetch(identityUrl, { method: 'POST', headers: identityHeaders, body: JSON.stringify({ nin, reason }) });
      const body = (await up.json()) as { data?: unknown };
      if (up.status !== 200 && reserving) await pool.query('UPDATE wallets SET reserved = reserved - 1 WHERE org_id = $1 AND reserved > 0', [orgId]);
      if (up.status === 404) {
        res.status(404).json({ detail: 'NIN not found' });
        return;
      }
      if (up.status !== 200) {
        res.status(502).json({ detail: 'Upstream failed' });
        return;
      }
      record = body.data;
    }
    const reference = `REF-${randomBytes(6).toString('hex').toUpperCase()}`;
    if (reserving) {
      await capture(orgId, reference);
      res.json({ data: record, reference_id: reference });
      return;
    }
    if (!(await debit(orgId, reference))) {
      res.status(402).json({ detail: 'Insufficient units in organisation wallet' });
      return;
    }
    res.json({ data: record, reference_id: reference });
  } catch {
    res.status(500).json({ detail: 'Internal server error' });
  }
});
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});

const server = app.listen(Number(env.PORT ?? 0), '127.0.0.1');
server.keepAliveTimeout = 65_000;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.close();
    server.closeAllConnections();
    void pool.end().finally(() => process.exit(0));
  });
}
