-- Up Migration
-- Automatic top-up (issue 34 item 6): when a debit leaves the balance below `below_units`, `units` are
-- bought with the card of the organisation's last successful top-up, at most `max_per_day` times a
-- Lagos day and one at a time.

-- Opted into by an administrator or a finance officer who re-entered their password. Turned off by the
-- service when the card is declined (`turned_off_reason`), or by a person.
CREATE TABLE auto_topup_settings (
  org_id bigint PRIMARY KEY REFERENCES organisations (id),
  enabled boolean NOT NULL,
  below_units integer NOT NULL CHECK (below_units BETWEEN 1 AND 1000000000),
  -- A top-up's own rule (src/modules/topup/pricing.ts): a multiple of 100, at most 1,000,000 (the
  -- organisation's minimum is checked when it is set, and again at each charge).
  units integer NOT NULL CHECK (units BETWEEN 100 AND 1000000 AND units % 100 = 0),
  max_per_day integer NOT NULL CHECK (max_per_day BETWEEN 1 AND 10),
  turned_off_reason text CHECK (turned_off_reason IN ('card_declined')),
  turned_off_at timestamptz,
  updated_by bigint REFERENCES users (id),
  updated_at timestamptz NOT NULL,
  CHECK ((turned_off_reason IS NULL) = (turned_off_at IS NULL)),
  CHECK (NOT (enabled AND turned_off_reason IS NOT NULL))
);

-- The card of the organisation's last successful top-up, when the processor may charge it again: the
-- authorization code and the e-mail it belongs to are a card credential, sealed together with
-- ENCRYPTION_KEYS (associated data `saved_card:<org_id>`); what a person reads to recognise the card
-- (brand, last four digits, bank, expiry) is kept beside it in clear.
CREATE TABLE saved_cards (
  org_id bigint PRIMARY KEY REFERENCES organisations (id),
  key_id text NOT NULL,
  authorization_enc bytea NOT NULL,
  card_type text NOT NULL CHECK (char_length(card_type) BETWEEN 1 AND 40),
  last4 text NOT NULL CHECK (last4 ~ '^[0-9]{4}$'),
  bank text,
  exp_month text,
  exp_year text,
  topup_reference text NOT NULL REFERENCES topups (reference),
  saved_at timestamptz NOT NULL,
  -- A charge of this card was declined: it is not charged again until a new top-up replaces it.
  declined_at timestamptz
);
CREATE INDEX saved_cards_key_idx ON saved_cards (key_id);

-- One row per automatic charge. `queued` is written by the debit that left the balance below the line
-- (the trigger below, in the debit's own statement); a worker moves it to `charging` (with the top-up
-- it charges, created before the processor hears of the reference), then `credited` (in the credit's
-- transaction), `declined`, `failed` or `skipped` (turned off, or no usable card, before any charge).
CREATE TABLE auto_topup_charges (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES organisations (id),
  status text NOT NULL CHECK (status IN ('queued', 'charging', 'credited', 'declined', 'failed', 'skipped')),
  -- The Lagos calendar day the charge counts against (max_per_day).
  lagos_day date NOT NULL,
  units integer NOT NULL CHECK (units > 0),
  below_units integer NOT NULL,
  -- The balance the debit left.
  balance_units bigint NOT NULL,
  reference text UNIQUE REFERENCES topups (reference),
  -- `visa ending 4081`: the card charged, for the receipt and the portal; `card_reference` names the
  -- saved card (the top-up it came from), so a decline marks that card and not a newer one.
  card text,
  card_reference text,
  detail text CHECK (char_length(detail) <= 300),
  created_at timestamptz NOT NULL DEFAULT now(),
  ended_at timestamptz,
  CHECK (status IN ('queued', 'skipped') OR reference IS NOT NULL),
  CHECK ((ended_at IS NULL) = (status IN ('queued', 'charging')))
);
-- At most one charge in flight per organisation: the debits that cross the line together queue one.
CREATE UNIQUE INDEX auto_topup_charges_one_in_flight ON auto_topup_charges (org_id) WHERE status IN ('queued', 'charging');
CREATE INDEX auto_topup_charges_day_idx ON auto_topup_charges (org_id, lagos_day);

-- Runs in the statement of every debit (a verification's capture, a face match's units, an operator's
-- negative adjustment): the wallet module stays the only writer of wallets, and the charge is queued in
-- the debit's own transaction, never a call to the processor. The debit holds the wallet row, so two
-- debits of one organisation run this one after the other; each query reads the latest committed rows.
-- The usual case (no automatic top-up, or the balance on or above the line) is one primary-key read.
CREATE FUNCTION wallets_queue_auto_topup() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  s auto_topup_settings%ROWTYPE;
  today date := (now() AT TIME ZONE 'Africa/Lagos')::date;
BEGIN
  SELECT * INTO s FROM auto_topup_settings WHERE org_id = NEW.org_id AND enabled;
  IF NOT FOUND OR NEW.units >= s.below_units THEN
    RETURN NULL;
  END IF;
  -- Read first, so a charge in flight costs no insert attempt (and no wait on the row's unique entry).
  IF EXISTS (SELECT 1 FROM auto_topup_charges WHERE org_id = NEW.org_id AND status IN ('queued', 'charging')) THEN
    RETURN NULL;
  END IF;
  IF (SELECT count(*) FROM auto_topup_charges WHERE org_id = NEW.org_id AND lagos_day = today AND status <> 'skipped') >= s.max_per_day THEN
    RETURN NULL;
  END IF;
  INSERT INTO auto_topup_charges (org_id, status, lagos_day, units, below_units, balance_units)
  VALUES (NEW.org_id, 'queued', today, s.units, s.below_units, NEW.units)
  ON CONFLICT (org_id) WHERE status IN ('queued', 'charging') DO NOTHING;
  RETURN NULL;
END $$;

CREATE TRIGGER wallets_auto_topup AFTER UPDATE OF units ON wallets
  FOR EACH ROW WHEN (NEW.units < OLD.units) EXECUTE FUNCTION wallets_queue_auto_topup();

ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_kind_check CHECK (kind IN ('receipt_email', 'password_reset_email', 'low_balance_email', 'webhook_disabled_email', 'invitation_email', 'auto_topup_declined_email')) NOT VALID;
ALTER TABLE outbox VALIDATE CONSTRAINT outbox_kind_check;

-- Down Migration
DELETE FROM outbox WHERE kind = 'auto_topup_declined_email';
ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_kind_check CHECK (kind IN ('receipt_email', 'password_reset_email', 'low_balance_email', 'webhook_disabled_email', 'invitation_email'));
DROP TRIGGER wallets_auto_topup ON wallets;
DROP FUNCTION wallets_queue_auto_topup();
DROP TABLE auto_topup_charges;
DROP TABLE saved_cards;
DROP TABLE auto_topup_settings;
