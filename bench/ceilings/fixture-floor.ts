import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import express from 'express';
import { admit, env, pool, serve } from './floor-common.ts';

/**
 * The fixture floor: per request, the same HS256 token check and one Redis EVALSHA as the service,
 * then one INSERT ... RETURNING of a ledger-shaped row, committed (autocommit) with
 * synchronous_commit as the server has it (on: the benchmark checks), and the fixture record as the
 * answer. Env (besides floor-common's): RECORD_FILE, the JSON of the fixture record.
 */
const record = JSON.parse(readFileSync(env('RECORD_FILE'), 'utf8')) as Record<string, unknown>;

await pool.query(`
  CREATE TABLE IF NOT EXISTS floor_ledger (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, org_id bigint NOT NULL, kind text NOT NULL,
    amount bigint NOT NULL DEFAULT 0 CHECK (amount >= 0), units_delta bigint NOT NULL,
    units_before bigint NOT NULL CHECK (units_before >= 0), units_after bigint NOT NULL CHECK (units_after >= 0),
    details jsonb NOT NULL DEFAULT '{}'::jsonb, reference text, created_at timestamptz NOT NULL DEFAULT now(),
    CHECK (units_after = units_before + units_delta))`);
await pool.query('CREATE INDEX IF NOT EXISTS floor_ledger_org_idx ON floor_ledger (org_id, id)');

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const newReference = () => `REF-${Array.from(randomBytes(12), (b) => ALPHABET[b % 36]).join('')}`;

const app = express();
app.post('/v1/verify-nin', express.json({ limit: '16kb' }), async (req, res) => {
  const claims = await admit(req.get('authorization'));
  if (!claims) return void res.status(401).json({ detail: 'Could not validate credentials' });
  const body = req.body as { nin?: unknown; reason?: unknown };
  if (typeof body?.nin !== 'string' || typeof body.reason !== 'string') return void res.status(422).json({ detail: 'nin and reason are required' });
  const reference = newReference();
  await pool.query(
    `INSERT INTO floor_ledger (org_id, kind, amount, units_delta, units_before, units_after, details, reference)
     VALUES ($1, 'fixture_verification', 0, 0, 1000, 1000, $2, $3) RETURNING id, units_before, units_after`,
    [claims.org, JSON.stringify({ fixture: true, outcome: 'found', mode: 'nin', reason: body.reason }), reference],
  );
  res.setHeader('Cache-Control', 'no-store');
  res.json({ data: { ...record, reference_id: reference } });
});
serve(app);
