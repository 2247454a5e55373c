-- Up Migration

-- The audit trail is one hash chain: each event's hash is SHA-256 over the previous event's hash and
-- the event's canonical text (src/modules/audit/canonical.ts). The chain head is one row that every
-- write locks (SELECT ... FOR UPDATE) and moves forward in the same statement, so concurrent writers
-- take turns and each sees the hash the one before it wrote (READ COMMITTED re-reads a row it waited
-- for). The head also remembers the last id and hash, so a removed or added event at the end shows.
CREATE TABLE audit_chain_head (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  last_id bigint NOT NULL CHECK (last_id >= 0),
  last_hash bytea NOT NULL CHECK (length(last_hash) = 32)
);
-- The chain starts from 32 zero bytes.
INSERT INTO audit_chain_head (last_id, last_hash) VALUES (0, decode(repeat('00', 32), 'hex'));

-- Ids come from the head (last_id + 1), not from a sequence: they are dense and in chain order.
CREATE TABLE audit_events (
  id bigint PRIMARY KEY,
  at timestamptz NOT NULL,
  -- Null for events of no organisation (an unknown username's failed sign-in, operator commands).
  org_id bigint REFERENCES organisations (id),
  actor text NOT NULL CHECK (actor ~ '^(user:[0-9]+|client:cli_[0-9a-f]{24}|system|operator|anonymous)$'),
  action text NOT NULL CHECK (action ~ '^[a-z_]+\.[a-z_]+$'),
  target text CHECK (length(target) <= 200),
  request_id text CHECK (length(request_id) <= 100),
  ip text CHECK (length(ip) <= 100),
  details jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(details) = 'object'),
  prev_hash bytea NOT NULL CHECK (length(prev_hash) = 32),
  hash bytea NOT NULL CHECK (length(hash) = 32)
);
CREATE INDEX audit_events_org_idx ON audit_events (org_id, id);
CREATE INDEX audit_events_org_action_idx ON audit_events (org_id, action, id);

-- Append-only for every role, the service's included. An ordinary (user) trigger on purpose: a
-- superuser can still ALTER TABLE audit_events DISABLE TRIGGER USER, and audit:verify is what
-- catches what is done then.
CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_events is append-only' USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER audit_events_no_change BEFORE UPDATE OR DELETE ON audit_events
  FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
  FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only();

-- The head only moves forward, and is never removed.
CREATE FUNCTION audit_chain_head_forward_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' OR NEW.last_id <= OLD.last_id THEN
    RAISE EXCEPTION 'audit_chain_head only moves forward' USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER audit_chain_head_forward BEFORE UPDATE OR DELETE ON audit_chain_head
  FOR EACH ROW EXECUTE FUNCTION audit_chain_head_forward_only();

-- Data-subject requests: HMAC-SHA256 (SUBJECT_HASH_KEY) of the NIN a verification concerns, so every
-- verification of one person can be found without keeping the NIN. A nullable column without a
-- default is a catalogue-only change; its rule goes in NOT VALID (no scan under the exclusive lock)
-- and is validated after; the partial index covers only rows that have one (none yet).
ALTER TABLE verifications ADD COLUMN subject_hash bytea;
ALTER TABLE verifications ADD CONSTRAINT verifications_subject_hash_length CHECK (length(subject_hash) = 32) NOT VALID;
ALTER TABLE verifications VALIDATE CONSTRAINT verifications_subject_hash_length;
CREATE INDEX verifications_subject_idx ON verifications (subject_hash) WHERE subject_hash IS NOT NULL;

-- Low-balance alerts: the organisation's line (null: off), and whether the alert for the current
-- stay below it was sent. A constant default is a catalogue-only change.
ALTER TABLE organisations ADD COLUMN low_balance_units integer CHECK (low_balance_units IS NULL OR low_balance_units BETWEEN 1 AND 1000000000);
ALTER TABLE wallets ADD COLUMN low_balance_alerted boolean NOT NULL DEFAULT false;

-- Whatever path credits the wallet (a top-up, an adjustment), a balance back on or above the line
-- arms the alert again. The WHEN clause keeps debits (the hot path) from running the function.
CREATE FUNCTION wallets_rearm_low_balance() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  line integer;
BEGIN
  SELECT low_balance_units INTO line FROM organisations WHERE id = NEW.org_id;
  IF line IS NULL OR NEW.units >= line THEN
    NEW.low_balance_alerted := false;
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER wallets_low_balance_rearm BEFORE UPDATE OF units ON wallets
  FOR EACH ROW WHEN (NEW.units > OLD.units AND OLD.low_balance_alerted) EXECUTE FUNCTION wallets_rearm_low_balance();

-- A changed line is a new line: its first crossing is announced again.
CREATE FUNCTION organisations_low_balance_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE wallets SET low_balance_alerted = false WHERE org_id = NEW.id AND low_balance_alerted;
  RETURN NEW;
END;
$$;
CREATE TRIGGER organisations_low_balance_line AFTER UPDATE OF low_balance_units ON organisations
  FOR EACH ROW WHEN (NEW.low_balance_units IS DISTINCT FROM OLD.low_balance_units) EXECUTE FUNCTION organisations_low_balance_changed();

ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_kind_check CHECK (kind IN ('receipt_email', 'password_reset_email', 'low_balance_email')) NOT VALID;
ALTER TABLE outbox VALIDATE CONSTRAINT outbox_kind_check;

-- Down Migration
DELETE FROM outbox WHERE kind = 'low_balance_email';
ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_kind_check CHECK (kind IN ('receipt_email', 'password_reset_email'));
DROP TRIGGER organisations_low_balance_line ON organisations;
DROP FUNCTION organisations_low_balance_changed();
DROP TRIGGER wallets_low_balance_rearm ON wallets;
DROP FUNCTION wallets_rearm_low_balance();
ALTER TABLE wallets DROP COLUMN low_balance_alerted;
ALTER TABLE organisations DROP COLUMN low_balance_units;
DROP INDEX verifications_subject_idx;
ALTER TABLE verifications DROP COLUMN subject_hash;
DROP TABLE audit_events;
DROP FUNCTION audit_events_append_only();
DROP TABLE audit_chain_head;
DROP FUNCTION audit_chain_head_forward_only();
