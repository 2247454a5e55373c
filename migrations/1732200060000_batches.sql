-- Up Migration

-- A batch of verifications (POST /verify-nin/batches). Its counts are not kept here: they are summed
-- from its lookups, so no counter can drift from the rows it counts.
CREATE TABLE verification_batches (
  id text PRIMARY KEY CHECK (id ~ '^BAT-[A-Z0-9]{12}$'),
  org_id bigint NOT NULL REFERENCES organisations (id),
  user_id bigint REFERENCES users (id),
  api_client_id bigint REFERENCES api_clients (id),
  reason text NOT NULL,
  status text NOT NULL CHECK (status IN ('queued', 'running', 'paused', 'completed', 'cancelled')),
  paused_reason text CHECK (paused_reason IN ('insufficient_units')),
  total integer NOT NULL CHECK (total BETWEEN 1 AND 50000),
  invalid integer NOT NULL CHECK (invalid BETWEEN 0 AND total),
  estimated_units integer NOT NULL CHECK (estimated_units BETWEEN 0 AND total),
  request_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  CHECK ((user_id IS NULL) <> (api_client_id IS NULL)),
  CHECK ((status = 'paused') = (paused_reason IS NOT NULL)),
  CHECK ((status IN ('completed', 'cancelled')) = (finished_at IS NOT NULL))
);
CREATE INDEX verification_batches_org_idx ON verification_batches (org_id, created_at DESC, id DESC);
-- The feeder's periodic pass reads only the batches still to finish.
CREATE INDEX verification_batches_open_idx ON verification_batches (created_at) WHERE status IN ('queued', 'running', 'paused');

-- One distinct identifier of a batch: looked up (and charged) once for every row that asked for it.
-- Its sealed query lives here only while it waits; once queued, its verification holds its own copy.
CREATE TABLE batch_lookups (
  batch_id text NOT NULL REFERENCES verification_batches (id),
  idx integer NOT NULL CHECK (idx >= 0),
  kind text NOT NULL CHECK (kind IN ('nin', 'vnin', 'phone')),
  fixture boolean NOT NULL,
  state text NOT NULL CHECK (state IN ('waiting', 'queued', 'found', 'not_found', 'failed', 'cancelled')),
  reference_id text CHECK (reference_id ~ '^REF-[A-Z0-9]{12}$'),
  reason text NOT NULL,
  row_count integer NOT NULL CHECK (row_count >= 1),
  query_enc bytea,
  key_id text,
  failure_code text,
  PRIMARY KEY (batch_id, idx),
  -- Waiting: sealed query, no verification yet. Queued or ended by a lookup: its verification named.
  CHECK (state <> 'waiting' OR (reference_id IS NULL AND query_enc IS NOT NULL)),
  CHECK (state IN ('waiting', 'cancelled') OR reference_id IS NOT NULL),
  CHECK (state = 'waiting' OR query_enc IS NULL)
);
CREATE INDEX batch_lookups_waiting_idx ON batch_lookups (batch_id, idx) WHERE state = 'waiting';
CREATE INDEX batch_lookups_queued_idx ON batch_lookups (batch_id) WHERE state = 'queued';

-- Every row as sent, in order: a valid row points at its lookup, an invalid one says why.
CREATE TABLE batch_rows (
  batch_id text NOT NULL REFERENCES verification_batches (id),
  row_no integer NOT NULL CHECK (row_no >= 1),
  client_ref text CHECK (length(client_ref) <= 100),
  lookup_idx integer,
  invalid_reason text,
  PRIMARY KEY (batch_id, row_no),
  FOREIGN KEY (batch_id, lookup_idx) REFERENCES batch_lookups (batch_id, idx),
  CHECK ((lookup_idx IS NULL) <> (invalid_reason IS NULL))
);

-- A batch lookup's verification names its batch and lookup: the unique index makes "queued for the
-- authority" (the row and its held unit) happen at most once per lookup, whoever feeds the batch.
ALTER TABLE verifications ADD COLUMN IF NOT EXISTS batch_id text;
ALTER TABLE verifications ADD COLUMN IF NOT EXISTS batch_lookup integer;
ALTER TABLE verifications ADD CONSTRAINT verifications_batch_lookup_pair CHECK ((batch_lookup IS NULL) OR (batch_id IS NOT NULL));
CREATE UNIQUE INDEX verifications_batch_lookup_uidx ON verifications (batch_id, batch_lookup) WHERE batch_lookup IS NOT NULL;

-- Down Migration
DROP INDEX IF EXISTS verifications_batch_lookup_uidx;
ALTER TABLE verifications DROP CONSTRAINT IF EXISTS verifications_batch_lookup_pair;
ALTER TABLE verifications DROP COLUMN IF EXISTS batch_lookup;
DROP TABLE batch_rows;
DROP TABLE batch_lookups;
DROP TABLE verification_batches;
