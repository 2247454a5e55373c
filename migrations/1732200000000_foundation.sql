-- Up Migration

-- The identity column is the sequential organisation number quoted in top-up references.
CREATE TABLE organisations (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  tenancy text NOT NULL CHECK (tenancy IN ('hosted', 'self-hosted')),
  affiliate boolean NOT NULL DEFAULT false,
  unit_cost_kobo integer NOT NULL CHECK (unit_cost_kobo > 0),
  min_topup_units integer NOT NULL CHECK (min_topup_units > 0 AND min_topup_units % 100 = 0),
  subscription_active boolean NOT NULL DEFAULT true,
  lifetime_units bigint NOT NULL DEFAULT 0 CHECK (lifetime_units >= 0),
  business_registration_ref text NOT NULL CHECK (length(btrim(business_registration_ref)) > 0),
  data_protection_ref text NOT NULL CHECK (length(btrim(data_protection_ref)) > 0),
  billing_email text,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Organisations are retired, never removed: their ledger must outlive them.
  deleted_at timestamptz
);

CREATE TABLE users (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id bigint REFERENCES organisations (id),
  username text NOT NULL UNIQUE CHECK (username = lower(username) AND length(username) BETWEEN 1 AND 254),
  email text,
  password_hash text NOT NULL,
  role text NOT NULL CHECK (role IN ('org_admin', 'member', 'platform_admin')),
  disabled boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((role = 'platform_admin') = (org_id IS NULL))
);
CREATE INDEX users_org_idx ON users (org_id);

-- `units` is the settled balance; `reserved` are units held by verifications in flight, so the
-- spendable balance is units - reserved and concurrent requests can never overspend.
CREATE TABLE wallets (
  org_id bigint PRIMARY KEY REFERENCES organisations (id),
  units bigint NOT NULL DEFAULT 0 CHECK (units >= 0),
  reserved integer NOT NULL DEFAULT 0 CHECK (reserved >= 0),
  CHECK (reserved <= units)
);

-- Append-only ledger. `amount` is money in kobo (0 for fixture calls); unit movements are in units_*.
CREATE TABLE wallet_transactions (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES organisations (id),
  kind text NOT NULL CHECK (kind IN ('verification', 'fixture_verification', 'topup', 'adjustment')),
  amount bigint NOT NULL DEFAULT 0 CHECK (amount >= 0),
  vat_amount bigint,
  service_charge bigint,
  units_delta bigint NOT NULL,
  units_before bigint NOT NULL CHECK (units_before >= 0),
  units_after bigint NOT NULL CHECK (units_after >= 0),
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  reference text,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (units_after = units_before + units_delta)
);
CREATE INDEX wallet_transactions_org_idx ON wallet_transactions (org_id, id);
-- The database itself refuses a second debit for one verification or a second credit for one top-up.
CREATE UNIQUE INDEX wallet_transactions_one_debit ON wallet_transactions (reference) WHERE kind = 'verification';
CREATE UNIQUE INDEX wallet_transactions_one_credit ON wallet_transactions (reference) WHERE kind = 'topup';

CREATE FUNCTION wallet_transactions_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'wallet_transactions is append-only';
END;
$$;
CREATE TRIGGER wallet_transactions_no_update BEFORE UPDATE OR DELETE ON wallet_transactions
  FOR EACH ROW EXECUTE FUNCTION wallet_transactions_append_only();

-- Down Migration
DROP TABLE wallet_transactions;
DROP FUNCTION wallet_transactions_append_only();
DROP TABLE wallets;
DROP TABLE users;
DROP TABLE organisations;
