import { createDecipheriv, createSecretKey, randomBytes, createCipheriv } from 'node:crypto';
import { readFileSync } from 'node:fs';
import express from 'express';
import { admit, env, pool, serve } from './floor-common.ts';

/**
 * The requery floor: per request, the same HS256 token check and one Redis EVALSHA as the service,
 * one primary-key SELECT of a verification-shaped row holding a ciphertext of the same size, an
 * AES-256-GCM decrypt and the same JSON answer. Env (besides floor-common's): RECORD_FILE, the
 * JSON of the service's own answer to the same requery (status, message, data, consent): `data` is
 * what the row holds sealed, the rest is answered as it is.
 */
const answer = JSON.parse(readFileSync(env('RECORD_FILE'), 'utf8')) as { data: Record<string, unknown> & { reference_id: string } } & Record<string, unknown>;
const reference = answer.data.reference_id;
const aesKey = createSecretKey(randomBytes(32));

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
  res.setHeader('Cache-Control', 'no-store');
  res.json({ ...answer, data: { ...data, reference_id: ref }, consent: row.consent ?? null });
});
serve(app);
