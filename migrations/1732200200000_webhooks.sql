-- Up Migration
-- Signed webhooks (issue 32): an organisation's endpoints, the events written in the transaction of
-- the change they report (the outbox), and one delivery row per endpoint and event, which the
-- workers claim, try and retry. Bodies carry no personal data; the secrets are sealed with the
-- encryption key ring (AES-256-GCM, associated data `webhook-endpoint:<id>`), never stored in clear.
CREATE TABLE webhook_endpoints (
  id text PRIMARY KEY CHECK (id ~ '^we_[0-9a-f]{24}$'),
  org_id bigint NOT NULL REFERENCES organisations (id),
  url text NOT NULL CHECK (length(url) BETWEEN 8 AND 2048),
  events text[] NOT NULL CHECK (cardinality(events) BETWEEN 1 AND 10 AND events <@ ARRAY[
    '*', 'verification.completed', 'batch.completed', 'batch.paused', 'batch.cancelled', 'topup.credited', 'wallet.low_balance', 'ping']::text[]),
  description text CHECK (length(description) <= 200),
  enabled boolean NOT NULL DEFAULT true,
  -- Why it was switched off by the service (410 Gone, or every try failing for the retry window).
  disabled_reason text CHECK (disabled_reason IN ('gone', 'failing')),
  secret_enc bytea NOT NULL,
  -- During a rotation the previous secret signs too, until previous_until.
  previous_secret_enc bytea,
  previous_until timestamptz,
  key_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  CHECK ((previous_secret_enc IS NULL) = (previous_until IS NULL)),
  CHECK (disabled_reason IS NULL OR NOT enabled)
);
CREATE INDEX webhook_endpoints_org_idx ON webhook_endpoints (org_id) WHERE deleted_at IS NULL;

CREATE TABLE webhook_events (
  id text PRIMARY KEY CHECK (id ~ '^evt_[0-9a-f]{24}$'),
  org_id bigint NOT NULL REFERENCES organisations (id),
  type text NOT NULL CHECK (type IN ('verification.completed', 'batch.completed', 'batch.paused', 'batch.cancelled', 'topup.credited', 'wallet.low_balance', 'ping')),
  -- The exact body every try sends (the same id, the same bytes, so a signature can be checked again).
  body text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_events_org_idx ON webhook_events (org_id, created_at);

CREATE TABLE webhook_deliveries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  endpoint_id text NOT NULL REFERENCES webhook_endpoints (id),
  event_id text NOT NULL REFERENCES webhook_events (id),
  -- A redelivery is a new row for the same event (the same id reaches the receiver again).
  redelivery_of bigint REFERENCES webhook_deliveries (id),
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  last_status_code integer CHECK (last_status_code BETWEEN 100 AND 599),
  last_error text CHECK (length(last_error) <= 300),
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  -- Held by a worker trying it until then; an expired lease (a killed worker) makes it claimable again.
  lease_until timestamptz,
  delivered_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'delivered') = (delivered_at IS NOT NULL)),
  CHECK (status = 'pending' OR lease_until IS NULL)
);
-- Each event reaches each subscribed endpoint once (redeliveries apart).
CREATE UNIQUE INDEX webhook_deliveries_once ON webhook_deliveries (endpoint_id, event_id) WHERE redelivery_of IS NULL;
-- The claim: an endpoint's due deliveries, oldest first; and its leases in flight.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint_id, next_attempt_at, id) WHERE status = 'pending';
-- The deliveries log, newest first.
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (endpoint_id, id DESC);

-- API clients may hold the new `webhooks` scope (administrators only, like `topup`).
ALTER TABLE api_clients DROP CONSTRAINT api_clients_scopes_known;
ALTER TABLE api_clients ADD CONSTRAINT api_clients_scopes_known
  CHECK (scopes IS NULL OR (cardinality(scopes) > 0 AND scopes <@ ARRAY['verify', 'requery', 'history:read', 'topup', 'webhooks']::text[])) NOT VALID;
ALTER TABLE api_clients VALIDATE CONSTRAINT api_clients_scopes_known;
ALTER TABLE api_clients ADD CONSTRAINT api_clients_webhooks_needs_admin CHECK (scopes IS NULL OR role = 'org_admin' OR NOT ('webhooks' = ANY (scopes))) NOT VALID;
ALTER TABLE api_clients VALIDATE CONSTRAINT api_clients_webhooks_needs_admin;

-- The e-mail to an organisation's administrators when an endpoint failed every try for the retry window.
ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_kind_check CHECK (kind IN ('receipt_email', 'password_reset_email', 'low_balance_email', 'webhook_disabled_email')) NOT VALID;
ALTER TABLE outbox VALIDATE CONSTRAINT outbox_kind_check;

-- Down Migration
DELETE FROM outbox WHERE kind = 'webhook_disabled_email';
ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_kind_check CHECK (kind IN ('receipt_email', 'password_reset_email', 'low_balance_email')) NOT VALID;
ALTER TABLE api_clients DROP CONSTRAINT IF EXISTS api_clients_webhooks_needs_admin;
ALTER TABLE api_clients DROP CONSTRAINT api_clients_scopes_known;
ALTER TABLE api_clients ADD CONSTRAINT api_clients_scopes_known CHECK (scopes IS NULL OR (cardinality(scopes) > 0 AND scopes <@ ARRAY['verify', 'requery', 'history:read', 'topup']::text[]));
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP TABLE webhook_endpoints;
