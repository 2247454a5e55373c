-- Up Migration
-- The person's side of a verification link (no dead ends, nothing turned away in silence).

-- Who the person may turn to when the page cannot go on (expired, used up, withdrawn, the organisation
-- cannot take verifications, a failure): a sentence naming an e-mail address, a phone number or a web
-- address (the API checks that; the column keeps the bound).
ALTER TABLE organisations ADD COLUMN support_contact text CHECK (char_length(support_contact) BETWEEN 1 AND 200);

-- A submission the organisation could not take (its wallet could not pay, it was paused, it may not
-- verify) is recorded too, so the organisation sees who came: `refused` with its reason and no
-- verification behind it. Only such a row lacks a reference.
ALTER TABLE verification_link_submissions ALTER COLUMN reference_id DROP NOT NULL;
ALTER TABLE verification_link_submissions ADD CONSTRAINT verification_link_submissions_reference_unless_refused
  CHECK (reference_id IS NOT NULL OR (status = 'refused' AND code IS NOT NULL));

-- At most one e-mail of a kind per organisation per rolling hour: the row's last mailing is moved only
-- by a statement that finds it an hour old or more (mail/windowed-mail.ts); notices held back in the
-- hour are counted, and the next e-mail says how many.
CREATE TABLE mail_windows (
  org_id bigint NOT NULL REFERENCES organisations (id),
  topic text NOT NULL CHECK (topic IN ('link_refused', 'auto_topup_skipped')),
  last_mailed_at timestamptz NOT NULL,
  outbox_id bigint REFERENCES outbox (id),
  held_back integer NOT NULL DEFAULT 0 CHECK (held_back >= 0),
  PRIMARY KEY (org_id, topic)
);

-- An automatic top-up skipped because the day's charges were all made: the debit's trigger records it
-- (once per organisation and Lagos day), so that the worker can tell the organisation.
CREATE UNIQUE INDEX auto_topup_charges_capped_once ON auto_topup_charges (org_id, lagos_day) WHERE status = 'skipped' AND detail = 'daily cap reached';
ALTER TABLE auto_topup_charges ADD COLUMN announced_at timestamptz;
-- Charges skipped before this change are not announced now.
UPDATE auto_topup_charges SET announced_at = coalesce(ended_at, now()) WHERE status = 'skipped';

CREATE OR REPLACE FUNCTION wallets_queue_auto_topup() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  s auto_topup_settings%ROWTYPE;
  today date := (now() AT TIME ZONE 'Africa/Lagos')::date;
BEGIN
  IF NOT auto_topup_due(NEW.org_id, NEW.units) THEN
    RETURN NULL;
  END IF;
  SELECT * INTO s FROM auto_topup_settings WHERE org_id = NEW.org_id;
  -- Read first, so a charge in flight costs no insert attempt (and no wait on the row's unique entry).
  IF EXISTS (SELECT 1 FROM auto_topup_charges WHERE org_id = NEW.org_id AND status IN ('queued', 'charging')) THEN
    RETURN NULL;
  END IF;
  IF (SELECT count(*) FROM auto_topup_charges WHERE org_id = NEW.org_id AND lagos_day = today AND status <> 'skipped') >= s.max_per_day THEN
    -- The day's charges are made: one skipped row for the day says so (the worker e-mails it).
    INSERT INTO auto_topup_charges (org_id, status, lagos_day, units, below_units, balance_units, detail, ended_at)
    VALUES (NEW.org_id, 'skipped', today, s.units, s.below_units, NEW.units, 'daily cap reached', now())
    ON CONFLICT (org_id, lagos_day) WHERE status = 'skipped' AND detail = 'daily cap reached' DO NOTHING;
    RETURN NULL;
  END IF;
  INSERT INTO auto_topup_charges (org_id, status, lagos_day, units, below_units, balance_units)
  VALUES (NEW.org_id, 'queued', today, s.units, s.below_units, NEW.units)
  ON CONFLICT (org_id) WHERE status IN ('queued', 'charging') DO NOTHING;
  RETURN NULL;
END $$;

ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_kind_check CHECK (kind IN ('receipt_email', 'password_reset_email', 'low_balance_email', 'webhook_disabled_email', 'invitation_email', 'auto_topup_declined_email', 'statement_email', 'link_refused_email', 'auto_topup_skipped_email')) NOT VALID;
ALTER TABLE outbox VALIDATE CONSTRAINT outbox_kind_check;

-- Down Migration
DROP TABLE mail_windows;
DELETE FROM outbox WHERE kind IN ('link_refused_email', 'auto_topup_skipped_email');
ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_kind_check CHECK (kind IN ('receipt_email', 'password_reset_email', 'low_balance_email', 'webhook_disabled_email', 'invitation_email', 'auto_topup_declined_email', 'statement_email'));
CREATE OR REPLACE FUNCTION wallets_queue_auto_topup() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  s auto_topup_settings%ROWTYPE;
  today date := (now() AT TIME ZONE 'Africa/Lagos')::date;
BEGIN
  IF NOT auto_topup_due(NEW.org_id, NEW.units) THEN
    RETURN NULL;
  END IF;
  SELECT * INTO s FROM auto_topup_settings WHERE org_id = NEW.org_id;
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
ALTER TABLE auto_topup_charges DROP COLUMN announced_at;
DROP INDEX auto_topup_charges_capped_once;
DELETE FROM verification_link_submissions WHERE reference_id IS NULL;
ALTER TABLE verification_link_submissions DROP CONSTRAINT verification_link_submissions_reference_unless_refused;
ALTER TABLE verification_link_submissions ALTER COLUMN reference_id SET NOT NULL;
ALTER TABLE organisations DROP COLUMN support_contact;
