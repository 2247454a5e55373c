-- Up Migration
-- Verification links (issue 33): an organisation sends a person a URL; the person opens it on a phone,
-- agrees, gives a vNIN (and a selfie) and the verification runs as the organisation's. Only the
-- token's SHA-256 is stored (128 random bits: a fast digest is as hard to reverse as a slow hash).
CREATE TABLE verification_links (
  id text PRIMARY KEY CHECK (id ~ '^LNK-[A-Z0-9]{12}$'),
  -- The list's order (newest first) and its cursor.
  seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  org_id bigint NOT NULL REFERENCES organisations (id),
  token_hash bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
  reason text NOT NULL CHECK (length(reason) BETWEEN 1 AND 64),
  purpose text NOT NULL CHECK (length(purpose) BETWEEN 1 AND 200),
  require_face boolean NOT NULL,
  expires_at timestamptz NOT NULL,
  max_uses integer NOT NULL CHECK (max_uses BETWEEN 1 AND 1000),
  -- Taken by one guarded UPDATE before a submission runs, given back when it charged nothing: never
  -- more than max_uses, however many submissions arrive at once.
  uses integer NOT NULL DEFAULT 0 CHECK (uses >= 0),
  client_ref text CHECK (length(client_ref) BETWEEN 1 AND 100),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
  -- Who made it: the verifications it runs are theirs (verifications_one_actor), as an API call's would be.
  created_by_user bigint REFERENCES users (id),
  created_by_client bigint REFERENCES api_clients (id),
  created_by_client_id text,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz,
  CONSTRAINT verification_links_uses_within_max CHECK (uses <= max_uses),
  CHECK (expires_at > created_at),
  CHECK ((created_by_user IS NULL) <> (created_by_client IS NULL)),
  CHECK ((created_by_client IS NULL) = (created_by_client_id IS NULL)),
  CHECK ((status = 'revoked') = (revoked_at IS NOT NULL))
);
CREATE INDEX verification_links_org_idx ON verification_links (org_id, seq DESC);

-- One row per submission that made a verification (a refusal before any lookup, such as a selfie
-- without a face, made none). The face result is read from the verification, sealed there, so that
-- retention and subject erasure cover it; this row holds no personal data.
CREATE TABLE verification_link_submissions (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  link_id text NOT NULL REFERENCES verification_links (id),
  reference_id text NOT NULL UNIQUE REFERENCES verifications (reference_id),
  status text NOT NULL CHECK (status IN ('found', 'not_found', 'failed', 'refused')),
  code text CHECK (length(code) BETWEEN 1 AND 64),
  submitted_at timestamptz NOT NULL
);
CREATE INDEX verification_link_submissions_link_idx ON verification_link_submissions (link_id, id DESC);

-- API clients may hold the new `links` scope (administrators only, like `webhooks`).
ALTER TABLE api_clients DROP CONSTRAINT api_clients_scopes_known;
ALTER TABLE api_clients ADD CONSTRAINT api_clients_scopes_known
  CHECK (scopes IS NULL OR (cardinality(scopes) > 0 AND scopes <@ ARRAY['verify', 'requery', 'history:read', 'topup', 'webhooks', 'links']::text[])) NOT VALID;
ALTER TABLE api_clients VALIDATE CONSTRAINT api_clients_scopes_known;
ALTER TABLE api_clients ADD CONSTRAINT api_clients_links_needs_admin CHECK (scopes IS NULL OR role = 'org_admin' OR NOT ('links' = ANY (scopes))) NOT VALID;
ALTER TABLE api_clients VALIDATE CONSTRAINT api_clients_links_needs_admin;

-- The new webhook event type.
ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_events_check;
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_events_check CHECK (cardinality(events) BETWEEN 1 AND 10 AND events <@ ARRAY[
  '*', 'verification.completed', 'batch.completed', 'batch.paused', 'batch.cancelled', 'topup.credited', 'wallet.low_balance', 'ping',
  'verification_link.submitted']::text[]) NOT VALID;
ALTER TABLE webhook_endpoints VALIDATE CONSTRAINT webhook_endpoints_events_check;
ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_type_check;
ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_type_check CHECK (type IN (
  'verification.completed', 'batch.completed', 'batch.paused', 'batch.cancelled', 'topup.credited', 'wallet.low_balance', 'ping',
  'verification_link.submitted')) NOT VALID;
ALTER TABLE webhook_events VALIDATE CONSTRAINT webhook_events_type_check;

-- Down Migration
DELETE FROM webhook_deliveries WHERE event_id IN (SELECT id FROM webhook_events WHERE type = 'verification_link.submitted');
DELETE FROM webhook_events WHERE type = 'verification_link.submitted';
ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_type_check;
ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_type_check CHECK (type IN ('verification.completed', 'batch.completed', 'batch.paused', 'batch.cancelled', 'topup.credited', 'wallet.low_balance', 'ping'));
UPDATE webhook_endpoints SET events = array_remove(events, 'verification_link.submitted') WHERE 'verification_link.submitted' = ANY (events) AND cardinality(events) > 1;
UPDATE webhook_endpoints SET events = ARRAY['ping'] WHERE events = ARRAY['verification_link.submitted'];
ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_events_check;
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_events_check CHECK (cardinality(events) BETWEEN 1 AND 10 AND events <@ ARRAY[
  '*', 'verification.completed', 'batch.completed', 'batch.paused', 'batch.cancelled', 'topup.credited', 'wallet.low_balance', 'ping']::text[]);
ALTER TABLE api_clients DROP CONSTRAINT IF EXISTS api_clients_links_needs_admin;
UPDATE api_clients SET scopes = array_remove(scopes, 'links') WHERE 'links' = ANY (scopes) AND cardinality(scopes) > 1;
ALTER TABLE api_clients DROP CONSTRAINT api_clients_scopes_known;
ALTER TABLE api_clients ADD CONSTRAINT api_clients_scopes_known CHECK (scopes IS NULL OR (cardinality(scopes) > 0 AND scopes <@ ARRAY['verify', 'requery', 'history:read', 'topup', 'webhooks']::text[]));
DROP TABLE verification_link_submissions;
DROP TABLE verification_links;
