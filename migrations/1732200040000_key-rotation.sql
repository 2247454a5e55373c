-- Up Migration
-- Key rotation. crypto:reencrypt and the /metrics gauge look for rows sealed with a key other than
-- the active one: these partial indexes hold only rows that still carry ciphertext, so both read
-- the few rows left under old keys instead of the whole table.
CREATE INDEX verifications_key_idx ON verifications (key_id) WHERE query_enc IS NOT NULL OR record_enc IS NOT NULL;
CREATE INDEX idempotency_keys_key_idx ON idempotency_keys (key_id) WHERE response_enc IS NOT NULL;
CREATE INDEX outbox_key_idx ON outbox (key_id) WHERE body_enc IS NOT NULL;
-- The key the request fingerprint (an HMAC) was computed with. Until now it was key_id, which also
-- names the key of the sealed answer; re-sealing the answer must not change the fingerprint's key,
-- which cannot be recomputed without the request. NULL: key_id (rows from before this column).
ALTER TABLE idempotency_keys ADD COLUMN hash_key_id text;

-- Down Migration
ALTER TABLE idempotency_keys DROP COLUMN hash_key_id;
DROP INDEX outbox_key_idx;
DROP INDEX idempotency_keys_key_idx;
DROP INDEX verifications_key_idx;
