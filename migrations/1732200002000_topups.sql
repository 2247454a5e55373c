-- Up Migration

CREATE TABLE topups (
  reference text PRIMARY KEY CHECK (reference ~ '^TOP-[0-9]+-[0-9a-f]{16}$'),
  org_id bigint NOT NULL REFERENCES organisations (id),
  user_id bigint REFERENCES users (id),
  units integer NOT NULL CHECK (units > 0 AND units % 100 = 0),
  bonus_units integer NOT NULL DEFAULT 0 CHECK (bonus_units >= 0),
  unit_cost_kobo integer NOT NULL CHECK (unit_cost_kobo > 0),
  base_amount bigint NOT NULL CHECK (base_amount > 0),
  vat_amount bigint NOT NULL CHECK (vat_amount >= 0),
  service_charge bigint NOT NULL CHECK (service_charge >= 0),
  total_amount bigint NOT NULL CHECK (total_amount = base_amount + vat_amount + service_charge),
  currency text NOT NULL DEFAULT 'NGN',
  access_code text,
  authorization_url text,
  status text NOT NULL DEFAULT 'pending'
    CHECK (status IN ('pending', 'credited', 'failed', 'abandoned', 'amount_mismatch')),
  processor_status text,
  paid_amount bigint,
  paid_currency text,
  credited_at timestamptz,
  last_checked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'credited') = (credited_at IS NOT NULL))
);
CREATE INDEX topups_org_idx ON topups (org_id, created_at);
CREATE INDEX topups_pending_idx ON topups (created_at) WHERE status = 'pending';

-- Every accepted processor notification, stored once (event_key is a digest of the signed body).
CREATE TABLE processor_events (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_key text NOT NULL UNIQUE,
  event text NOT NULL,
  reference text,
  payload jsonb NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  processed_at timestamptz,
  outcome text
);
CREATE INDEX processor_events_reference_idx ON processor_events (reference);

-- Transactional outbox: rows are written in the same transaction as the credit they describe.
CREATE TABLE outbox (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('receipt_email')),
  dedupe_key text NOT NULL UNIQUE,
  payload jsonb NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz
);
CREATE INDEX outbox_pending_idx ON outbox (created_at) WHERE status = 'pending';

CREATE TABLE ledger_audits (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  ran_at timestamptz NOT NULL DEFAULT now(),
  wallets_checked integer NOT NULL,
  mismatches jsonb NOT NULL DEFAULT '[]'::jsonb
);

-- Down Migration
DROP TABLE ledger_audits;
DROP TABLE outbox;
DROP TABLE processor_events;
DROP TABLE topups;
