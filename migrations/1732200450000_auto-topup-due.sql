-- Up Migration
-- Whether a balance is under the organisation's automatic top-up line, written once: the debit's
-- trigger asks it before it queues a charge, and a verification's capture statement returns it
-- (src/modules/wallet/holds.ts) so that the worker looks for a queued charge only after a debit that
-- may have queued one, instead of after every debit.
CREATE FUNCTION auto_topup_due(p_org bigint, p_units bigint) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM auto_topup_settings WHERE org_id = p_org AND enabled AND p_units < below_units)
$$;

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
    RETURN NULL;
  END IF;
  INSERT INTO auto_topup_charges (org_id, status, lagos_day, units, below_units, balance_units)
  VALUES (NEW.org_id, 'queued', today, s.units, s.below_units, NEW.units)
  ON CONFLICT (org_id) WHERE status IN ('queued', 'charging') DO NOTHING;
  RETURN NULL;
END $$;

-- Down Migration
CREATE OR REPLACE FUNCTION wallets_queue_auto_topup() RETURNS trigger LANGUAGE plpgsql AS $$
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

DROP FUNCTION auto_topup_due(bigint, bigint);
