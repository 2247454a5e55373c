import { createCipheriv, createHmac, createSecretKey, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import express from 'express';
import { admit, env, pool, SAME_WRITES, serve } from './floor-common.ts';

/**
 * The fixture floor: per request, the same HS256 token check and one Redis EVALSHA as the service,
 * then one INSERT ... RETURNING of a ledger-shaped row, committed (autocommit) with
 * synchronous_commit as the server has it (on: the benchmark checks), and the fixture record as the
 * answer. Env (besides floor-common's): RECORD_FILE, the JSON of the fixture record.
 *
 * With FLOOR_SAME_WRITES=1 it also makes the write the service's contract requires of a fixture
 * verification: the verification row a later requery reads (a table like verifications, its indexes
 * and checks; the query and the record each sealed with AES-256-GCM, the subject's keyed hash) in the
 * ledger line's own statement, as the service writes them.
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

if (SAME_WRITES) await pool.query('CREATE TABLE IF NOT EXISTS floor_verification_rows (LIKE verifications INCLUDING ALL)');
const aesKey = createSecretKey(randomBytes(32));
const hashKey = randomBytes(32);

/** AES-256-GCM with the reference as associated data: iv, tag, ciphertext. */
function seal(value: unknown, reference: string): Buffer {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', aesKey, iv);
  c.setAAD(Buffer.from(reference));
  const body = Buffer.concat([c.update(JSON.stringify(value)), c.final()]);
  return Buffer.concat([iv, c.getAuthTag(), body]);
}

/** The verification row and its ledger line in one statement, as the service writes a fixture call. */
async function writeWithRow(claims: { sub: string; org: number }, nin: string, reason: string, reference: string, requestId: string | undefined) {
  const now = new Date();
  const { rows } = await pool.query(
    `WITH v AS (
       INSERT INTO floor_verification_rows (reference_id, org_id, user_id, mode, reason, fixture, status, holds_unit, query_enc, record_enc, key_id, subject_hash, request_id, created_at, completed_at, expires_at, delivery)
       VALUES ($1, $2, $3, 'nin', $4, true, 'found', false, $5, $6, 'k1', $7, $8, $9, $9, $10, 'sync')
       RETURNING reference_id
     )
     INSERT INTO floor_ledger (org_id, kind, amount, units_delta, units_before, units_after, details, reference)
     SELECT $2, 'fixture_verification', 0, 0, 1000, 1000, $11, v.reference_id FROM v
     RETURNING id, units_before, units_after`,
    [
      reference, claims.org, Number(claims.sub), reason, seal({ mode: 'nin', nin, reason }, reference), seal(record, reference),
      createHmac('sha256', hashKey).update(nin).digest(), requestId ?? null, now, new Date(now.getTime() + 30 * 86_400_000),
      JSON.stringify({ fixture: true, outcome: 'found', mode: 'nin', reason }),
    ],
  );
  return rows;
}

const app = express();
app.post('/v1/verify-nin', express.json({ limit: '16kb' }), async (req, res) => {
  const claims = await admit(req.get('authorization'));
  if (!claims) return void res.status(401).json({ detail: 'Could not validate credentials' });
  const body = req.body as { nin?: unknown; reason?: unknown };
  if (typeof body?.nin !== 'string' || typeof body.reason !== 'string') return void res.status(422).json({ detail: 'nin and reason are required' });
  const reference = newReference();
  if (SAME_WRITES) await writeWithRow(claims, body.nin, body.reason, reference, req.get('x-request-id'));
  else await pool.query(
    `INSERT INTO floor_ledger (org_id, kind, amount, units_delta, units_before, units_after, details, reference)
     VALUES ($1, 'fixture_verification', 0, 0, 1000, 1000, $2, $3) RETURNING id, units_before, units_after`,
    [claims.org, JSON.stringify({ fixture: true, outcome: 'found', mode: 'nin', reason: body.reason }), reference],
  );
  res.setHeader('Cache-Control', 'no-store');
  res.json({ data: { ...record, reference_id: reference } });
});
serve(app);
