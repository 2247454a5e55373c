import { createDecipheriv, createHash, createSecretKey, randomBytes, createCipheriv } from 'node:crypto';
import { readFileSync } from 'node:fs';
import express from 'express';
import { admit, env, pool, SAME_WRITES, serve } from './floor-common.ts';

/**
 * The requery floor: per request, the same HS256 token check and one Redis EVALSHA as the service,
 * one primary-key SELECT of a verification-shaped row holding a ciphertext of the same size, an
 * AES-256-GCM decrypt and the same JSON answer. Env (besides floor-common's): RECORD_FILE, the
 * JSON of the service's own answer to the same requery (status, message, data, consent): `data` is
 * what the row holds sealed, the rest is answered as it is.
 *
 * With FLOOR_SAME_WRITES=1 it also makes the write the service's contract requires of a requery that
 * returns a record: one audit-shaped row (a table like audit_events, its indexes and checks) inserted
 * and committed before the answer, with its hash computed, but no chain head to lock or move.
 */
const answer = JSON.parse(readFileSync(env('RECORD_FILE'), 'utf8')) as { data: Record<string, unknown> & { reference_id: string } } & Record<string, unknown>;
const reference = answer.data.reference_id;
// Derived from the token secret, so the two floor processes of a run (with and without the writes)
// seal the one shared row under the same key, whichever wrote it last.
const aesKey = createSecretKey(createHash('sha256').update(env('JWT_SECRET')).update('requery floor record key').digest());

await pool.query(`
  CREATE TABLE IF NOT EXISTS floor_verifications (
    reference_id text PRIMARY KEY, org_id bigint NOT NULL, user_id bigint, api_client_id bigint, mode text NOT NULL,
    reason text NOT NULL, fixture boolean NOT NULL DEFAULT false, status text NOT NULL, consent jsonb, record_enc bytea,
    key_id text, created_at timestamptz NOT NULL DEFAULT now(), expires_at timestamptz NOT NULL)`);
{
  const { reference_id: _, ...data } = answer.data;
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', aesKey, iv);
  c.setAAD(Buffer.from(reference));
  const body = Buffer.concat([c.update(JSON.stringify(data)), c.final()]);
  await pool.query(
    `INSERT INTO floor_verifications (reference_id, org_id, mode, reason, status, record_enc, key_id, expires_at)
     VALUES ($1, 0, 'nin', 'corporate', 'found', $2, 'k1', now() + interval '1 day')
     ON CONFLICT (reference_id) DO UPDATE SET record_enc = EXCLUDED.record_enc`,
    [reference, Buffer.concat([iv, c.getAuthTag(), body])],
  );
}

if (SAME_WRITES) {
  await pool.query('CREATE TABLE IF NOT EXISTS floor_audit_events (LIKE audit_events INCLUDING ALL)');
  await pool.query('CREATE SEQUENCE IF NOT EXISTS floor_audit_events_id');
}
const ZERO_HASH = Buffer.alloc(32);

/** The audit-shaped row of one requery: who, what, from where, and a hash over it (no chain). */
async function recordRead(sub: string, org: number, ref: string, requestId: string | undefined, ip: string | undefined): Promise<void> {
  const actor = /^[0-9]+$/.test(sub) ? `user:${sub}` : `client:${sub.slice(sub.indexOf(':') + 1)}`;
  const at = new Date().toISOString();
  const body = JSON.stringify({ action: 'verification.requeried', actor, at, details: {}, ip: ip ?? null, org_id: org, request_id: requestId ?? null, target: ref });
  await pool.query(
    `INSERT INTO floor_audit_events (id, at, org_id, actor, action, target, request_id, ip, details, prev_hash, hash)
     VALUES (nextval('floor_audit_events_id'), $1, $2, $3, 'verification.requeried', $4, $5, $6, '{}', $7, $8)`,
    [at, org, actor, ref, requestId ?? null, ip ?? null, ZERO_HASH, createHash('sha256').update(ZERO_HASH).update(body).digest()],
  );
}

const app = express();
app.post('/v1/verify-nin/requery', express.json({ limit: '16kb' }), async (req, res) => {
  const claims = await admit(req.get('authorization'));
  if (!claims) return void res.status(401).json({ detail: 'Could not validate credentials' });
  const ref = (req.body as { reference_id?: unknown })?.reference_id;
  if (typeof ref !== 'string') return void res.status(422).json({ detail: 'reference_id is required' });
  const { rows } = await pool.query<{ record_enc: Buffer; expires_at: Date; consent: unknown }>('SELECT record_enc, expires_at, consent FROM floor_verifications WHERE reference_id = $1', [ref]);
  const row = rows[0];
  if (!row) return void res.status(404).json({ detail: 'Unknown reference_id' });
  const d = createDecipheriv('aes-256-gcm', aesKey, row.record_enc.subarray(0, 12));
  d.setAAD(Buffer.from(ref));
  d.setAuthTag(row.record_enc.subarray(12, 28));
  const data = JSON.parse(Buffer.concat([d.update(row.record_enc.subarray(28)), d.final()]).toString('utf8')) as Record<string, unknown>;
  if (SAME_WRITES) await recordRead(claims.sub, claims.org, ref, req.get('x-request-id'), req.socket.remoteAddress);
  res.setHeader('Cache-Control', 'no-store');
  res.json({ ...answer, data: { ...data, reference_id: ref }, consent: row.consent ?? null });
});
serve(app);
