-- Up Migration

CREATE TABLE verifications (
  reference_id text PRIMARY KEY CHECK (reference_id ~ '^REF-[A-Z0-9]{12}$'),
  org_id bigint NOT NULL REFERENCES organisations (id),
  user_id bigint NOT NULL REFERENCES users (id),
  mode text NOT NULL CHECK (mode IN ('nin', 'phone', 'demography')),
  reason text NOT NULL,
  fixture boolean NOT NULL DEFAULT false,
  status text NOT NULL CHECK (status IN ('pending', 'found', 'not_found', 'failed', 'expired')),
  -- True while a unit is held in wallets.reserved for this verification.
  holds_unit boolean NOT NULL DEFAULT false,
  -- AES-256-GCM ciphertexts (iv | tag | data) of the query and of the person record; key_id names the key.
  query_enc bytea,
  record_enc bytea,
  key_id text,
  failure_code text,
  failure_detail text,
  attempts integer NOT NULL DEFAULT 0,
  request_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz,
  expires_at timestamptz NOT NULL,
  CHECK (NOT (fixture AND holds_unit))
);
CREATE INDEX verifications_org_idx ON verifications (org_id, created_at);
CREATE INDEX verifications_pending_idx ON verifications (created_at) WHERE status = 'pending';
CREATE INDEX verifications_expiry_idx ON verifications (expires_at) WHERE record_enc IS NOT NULL OR query_enc IS NOT NULL;

-- Idempotency-Key replay: the first answer is kept (encrypted: it holds personal data) for 24 hours.
CREATE TABLE idempotency_keys (
  org_id bigint NOT NULL REFERENCES organisations (id),
  key text NOT NULL,
  endpoint text NOT NULL,
  request_hash text NOT NULL,
  reference_id text,
  status_code integer,
  response_enc bytea,
  key_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

-- Down Migration
DROP TABLE idempotency_keys;
DROP TABLE verifications;
